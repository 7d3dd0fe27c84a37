package generator

import (
	"io"
	"os"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// PlainArgs reports whether args are what systemd passes a generator: one
// to three directories, no flag (anything else goes through the command
// tree, which parses the flags or reports the usage error).
func PlainArgs(args []string) bool {
	if len(args) < 1 || len(args) > 3 {
		return false
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

// OnHost is one run as systemd's generator for the host under root: it
// decides and writes the drop-ins into dirs (NORMAL [EARLY [LATE]]) with this
// process's environment and executable. The outcome is logged (the kernel
// log or the journal on the real host, stderr under another root or when
// neither is there), and nothing is returned: a generator exits 0 whatever
// happened. kind is --distribution ("": found from the installed units).
func OnHost(root hostfs.Root, configFile string, kind distro.Kind, dirs []string, stderr io.Writer) {
	log := OpenLogger(root.IsHost(), stderr)
	defer log.Close()
	_, _ = Run(Options{
		Root: root, Dirs: dirs, Environ: os.Environ(), ConfigFile: configFile,
		Binary: InstalledBinary(root, os.Executable), Log: log, Distribution: kind,
	})
}
