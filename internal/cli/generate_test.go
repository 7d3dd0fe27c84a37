package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// systemd's call (directories only) runs the generator before the command
// tree is built; a call with flags goes through the tree. Both must write
// the same files and log the same line.
func TestGeneratorDispatchMatchesCommandTree(t *testing.T) {
	t.Setenv("SYSTEMD_IN_INITRD", "")
	cases := []struct {
		name string
		host func(*testhost.Host)
	}{
		{"debian 12 tarball server", func(h *testhost.Host) { h.Debian12().RKE2Unit("tarball", "server") }},
		{"broken config", func(h *testhost.Host) {
			h.Debian12().RKE2Unit("tarball", "server").File(hostfs.ConfigFile, "backnd: auto\n")
		}},
		{"backend off on the command line", func(h *testhost.Host) {
			h.Debian12().RKE2Unit("rpm", "agent").Cmdline("ro rke2.proxy_backend=off")
		}},
		{"no rke2", func(h *testhost.Host) { h.Debian12() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t)
			c.host(h)
			gen := "/usr/lib/systemd/system-generators/" + GeneratorName
			t.Setenv(hostfs.EnvRoot, h.Dir())
			direct, directLog := runGenerate(t, func(dirs []string) []string { return append([]string{gen}, dirs...) })
			t.Setenv(hostfs.EnvRoot, "")
			tree, treeLog := runGenerate(t, func(dirs []string) []string {
				return append([]string{gen, "--root", h.Dir()}, dirs...)
			})
			if directLog != treeLog {
				t.Errorf("log differs:\ndirect: %q\ntree:   %q", directLog, treeLog)
			}
			golden.Compare(t, direct, tree) // what the direct dispatch wrote against the tree's
		})
	}
}

// runGenerate runs Main with the argv made from three fresh output dirs and
// returns every file written (by path under the outputs) and the log with
// the outputs' path replaced by $OUT.
func runGenerate(t *testing.T, argv func(dirs []string) []string) (map[string]string, string) {
	t.Helper()
	dirs := testhost.GeneratorDirs(t)
	out := filepath.Dir(dirs[0])
	var stdout, stderr bytes.Buffer
	if code := Main(argv(dirs), &stdout, &stderr); code != ExitOK {
		t.Fatalf("generator exited %d: %s", code, stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("generator wrote to stdout: %q", stdout.String())
	}
	files := golden.ReadTree(t, out)
	for name, content := range files {
		files[name] = strings.ReplaceAll(content, out, "$OUT")
	}
	return files, strings.ReplaceAll(stderr.String(), out, "$OUT")
}

// Anything but systemd's plain call still gets the command tree's flags,
// help and usage errors.
func TestGeneratorNameWithFlagsOrBadArgsUsesCommandTree(t *testing.T) {
	gen := GeneratorName
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no directory", []string{gen}, ExitUsage, "accepts between 1 and 3 arg(s)"},
		{"four directories", []string{gen, "a", "b", "c", "d"}, ExitUsage, "accepts between 1 and 3 arg(s)"},
		{"help", []string{gen, "--help"}, ExitOK, "generate NORMAL [EARLY [LATE]]"},
		{"unknown flag", []string{gen, "--bogus", "a"}, ExitUsage, "unknown flag"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(c.args, &stdout, &stderr)
			if code != c.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, c.code, stderr.String())
			}
			if got := stdout.String() + stderr.String(); !strings.Contains(got, c.want) {
				t.Errorf("output does not contain %q:\n%s", c.want, got)
			}
		})
	}
}
