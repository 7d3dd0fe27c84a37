package cli

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func init() { register(newGenerateCommand) }

func newGenerateCommand(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "generate NORMAL [EARLY [LATE]]",
		Short: "Run as the systemd generator: write drop-ins for rke2-server/rke2-agent",
		Long: `generate is the systemd generator (systemd.generator(7)); installed as
/usr/lib/systemd/system-generators/rke2-proxy-backend-generator it runs at
every boot and daemon-reload. It decides the backend and writes, into the
NORMAL directory only, a drop-in for each installed RKE2 unit that records the
decision, runs "rke2-proxy-backend apply" before RKE2 starts and pulls in
rke2-proxy-backend-verify.service, plus one for the verify unit.

It never fails the boot and always exits 0. It logs one line to the kernel
log; without /dev/kmsg (containers) to the journal when journald listens,
else to stderr (systemd's console at boot); with --root, to stderr.

A broken operator config still wires "rke2-proxy-backend apply" (without a
backend, no verify) into the RKE2 units: apply exits 2 on the same error, so
RKE2 does not start until the config is fixed, and the drop-in an earlier
boot left is never used silently. On any other problem it writes nothing and
its line says RKE2 starts without apply. It does nothing in the initrd
(SYSTEMD_IN_INITRD=1 or /etc/initrd-release).`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			runGenerator(g, dirs)
			return nil
		},
	}
}

// runGenerator decides and writes the drop-ins into dirs (NORMAL [EARLY
// [LATE]]); the outcome is logged, and a generator exits 0 whatever happened.
func runGenerator(g *globals, dirs []string) {
	root := g.hostRoot()
	log := generator.OpenLogger(root.IsHost(), g.stderr)
	defer log.Close()
	configFile := ""
	if g.configFile != hostfs.ConfigFile {
		configFile = g.configFile
	}
	_, _ = generator.Run(generator.Options{
		Root:       root,
		Dirs:       dirs,
		Getenv:     os.Getenv,
		ConfigFile: configFile,
		Binary:     generatorBinary(root, os.Executable),
		Decide: func() (facts.Facts, config.Config, decide.Decision, error) {
			// Live rules are left out: at boot there are none, and on
			// daemon-reload the previous plan keeps the node where it is.
			return g.loadDecision(facts.Options{})
		},
		Log: log,
	})
}

// generatorBinary is the binary the drop-ins run: the one systemd started
// as the generator (its link resolved by the kernel), so a tarball install
// under /usr/local runs its own binary and a package's /usr/bin its own.
// "" (hostfs.Binary) unless it is the installed tool on this host: with
// --root the drop-ins describe a fixture, and a test binary, or one whose
// file was replaced under it ("... (deleted)"), is no tool to run.
func generatorBinary(root hostfs.Root, executable func() (string, error)) string {
	if !root.IsHost() {
		return ""
	}
	exe, err := executable()
	if err != nil || !filepath.IsAbs(exe) || filepath.Base(exe) != filepath.Base(hostfs.Binary) {
		return ""
	}
	return filepath.Clean(exe)
}
