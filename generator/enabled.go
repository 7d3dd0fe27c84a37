package generator

import (
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// maxWantsDirs bounds the *.wants directories looked into, as facts does
// for the host's network services.
const maxWantsDirs = 4096

// enabledRKE2Unit returns the one unit of names that is enabled (a link in
// an /etc/systemd/system/*.wants directory: what `systemctl enable` makes
// and what the next boot starts), or "" when none or several are. The watch
// unit is PartOf= that one only: RKE2's tarball installs both units on every
// node, and its units before 2025 conflict with each other, so a watch
// PartOf= both could not be restarted with RKE2. A generator has no D-Bus,
// so the files are what it can read.
func enabledRKE2Unit(root hostfs.Root, names []string) string {
	dirs, err := root.ReadDirMax(facts.SystemdSystemDir, maxWantsDirs)
	if err != nil {
		return ""
	}
	enabled := map[string]bool{}
	for _, d := range dirs {
		if !strings.HasSuffix(d.Name(), ".wants") {
			continue
		}
		for _, n := range names {
			if _, err := root.Readlink(path.Join(facts.SystemdSystemDir, d.Name(), n)); err == nil {
				enabled[n] = true
			}
		}
	}
	if len(enabled) != 1 {
		return ""
	}
	for n := range enabled {
		return n
	}
	return ""
}
