package generator

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

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

// Main is the generator's own program, cmd/rke2-proxy-backend-generator:
// systemd's call (directories only) runs the generator for the host; any
// other (flags, --help, a usage error) is the tool's `generate` command's,
// so it runs the tool installed beside it with the same arguments. The
// program links the boot path only, not the command tree and the other
// commands: it starts at every boot and every daemon-reload, and a Go
// program's start grows with what it links (bench/generator.sh).
func Main(args []string, stderr io.Writer) int {
	if PlainArgs(args) {
		OnHost(hostfs.New(hostfs.DefaultRoot()), hostfs.ConfigFile, "", args, stderr)
		return 0
	}
	tool := InstalledBinary(hostfs.New("/"), os.Executable)
	if tool == "" {
		tool = hostfs.Binary
	}
	err := syscall.Exec(tool, append([]string{tool, "generate"}, args...), os.Environ())
	fmt.Fprintf(stderr, "%s: flags and help are `rke2-proxy-backend generate`'s, and %s cannot be run: %v\n", Name, tool, err)
	return 2
}
