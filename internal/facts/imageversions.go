package facts

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"
)

// An image's versions, learned without running its programs: they may be
// another architecture's, and a pipeline must not run what it certifies.
// RKE2's and k3s's binaries carry their version as a string (the -X
// flag of their build); RPM images keep the tools' versions in the RPM
// database, which this machine's rpm reads (--root, --dbpath); Debian
// images in dpkg's status file (toolVersions).

// maxBinaryScan bounds the read of an image's RKE2 or k3s binary
// (RKE2's is about 120 MiB, k3s's about 70).
const maxBinaryScan = 512 << 20

// embeddedVersion is the version string RKE2's and k3s's builds embed.
var embeddedVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`v1\.[0-9]{1,3}\.[0-9]{1,4}\+(?:rke2r|k3s)[0-9]{1,3}`)
})

// imageBinaryVersion reads the version embedded in the binary the first
// unit that names one runs, without running it. ok is false when there is
// no such binary, no version in it, or several different ones (which one
// the build stamped cannot be told from bytes alone).
func (p *probe) imageBinaryVersion(units []RKE2Unit) (version, source string, ok bool) {
	for _, u := range units {
		if u.Binary == "" || !path.IsAbs(u.Binary) {
			continue
		}
		onDisk, err := p.root.Resolve(u.Binary)
		if err != nil {
			continue
		}
		f, err := os.Open(onDisk)
		if err != nil {
			continue
		}
		found, err := scanVersions(io.LimitReader(f, maxBinaryScan))
		f.Close()
		switch {
		case err != nil:
			p.unreadable("%s, which %s runs: %s: its version is unknown; check the file", u.Binary, u.Name, errText(err))
		case len(found) == 1:
			return found[0], u.Binary + " (the version string its build embeds, read without running it)", true
		case len(found) > 1:
			p.problem("%s, which %s runs, holds several version strings (%s): which one its build stamped is unknown.", u.Binary, u.Name, strings.Join(found, ", "))
		}
		return "", "", false // none: the data directory's sentence says the version is unknown
	}
	return "", "", false
}

// maxVersions bounds the distinct versions kept from one binary.
const maxVersions = 8

// scanVersions finds the distinct embedded versions in r, in order of
// appearance, reading it in chunks that overlap by more than a version's
// length.
func scanVersions(r io.Reader) ([]string, error) {
	const chunk, overlap = 1 << 20, 64
	var found []string
	buf := make([]byte, 0, chunk+overlap)
	for {
		if len(buf) > overlap {
			copy(buf, buf[len(buf)-overlap:])
			buf = buf[:overlap]
		}
		n, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		for _, m := range embeddedVersion().FindAll(buf, -1) {
			if v := string(m); !slices.Contains(found, v) && len(found) < maxVersions {
				found = append(found, v)
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return found, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// rpmDatabases are where RPM keeps its database: Fedora 36+, EL 10 and
// SUSE under /usr, older releases under /var.
var rpmDatabases = []string{"/usr/lib/sysimage/rpm", "/var/lib/rpm"}

// rpmTimeout bounds one rpm query of an image's database.
const rpmTimeout = 20 * time.Second

// rpmVersions asks this machine's rpm for the versions of the packages
// named in the image's RPM database; nil when the image has none.
func (p *probe) rpmVersions(names ...string) map[string]ToolVersion {
	var db string
	for _, d := range rpmDatabases {
		if st, err := p.root.Stat(d); err == nil && st.IsDir() {
			if entries, _ := p.root.ReadDir(d); len(entries) > 0 {
				db = d
				break
			}
		}
	}
	if db == "" {
		return nil
	}
	rpm, err := exec.LookPath("rpm")
	if err != nil {
		p.problem("The image's RPM database (%s) cannot be read: this machine has no rpm (install the rpm package); the image's nft and iptables versions are unknown.", db)
		return nil
	}
	argv := append([]string{rpm, "--root", p.root.Dir(), "--dbpath", db, "-q", "--qf", `%{NAME} %{VERSION}\n`}, names...)
	res, err := boundexec.Run(context.Background(), boundexec.Command{Argv: argv, Env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, Timeout: rpmTimeout, MaxOutput: 64 << 10})
	if err != nil && res.Stdout == "" {
		p.unreadable("%s: rpm --root --dbpath %s -q: %s; the image's nft and iptables versions are unknown; check the database", db, db, runProblem(err))
		return nil
	}
	// rpm exits non-zero when a package is not installed, and says so on
	// stdout: only "NAME VERSION" lines of the names asked count.
	out := map[string]ToolVersion{}
	for _, line := range strings.Split(res.Stdout, "\n") {
		name, version, ok := strings.Cut(strings.TrimSpace(line), " ")
		if !ok || strings.Contains(version, " ") || !slices.Contains(names, name) {
			continue
		}
		out[name] = ToolVersion{Version: version, Source: fmt.Sprintf("the image's RPM database %s (package %s)", db, name)}
	}
	return out
}
