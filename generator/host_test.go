package generator

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Without a Decider the generator decides for its host itself: the config
// file it is given (only a non-default one is passed on to apply and
// verify) and its environment reach the drop-ins.
func TestGeneratorDecidesForItsHost(t *testing.T) {
	const other = "/srv/proxy-backend.yaml"
	for _, c := range []struct {
		name, configFile string
		environ          []string
		apply            string
	}{
		{name: "defaults", apply: "apply --backend=iptables-nft\n"},
		{name: "default file named", configFile: hostfs.ConfigFile, apply: "apply --backend=iptables-nft\n"},
		{name: "other file", configFile: other, apply: "apply --backend=iptables-legacy --config=" + other + "\n"},
		{name: "environment", environ: []string{"RKE2_PROXY_BACKEND=iptables-legacy"}, apply: "apply --backend=iptables-legacy\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").File(other, "backend: iptables-legacy\n")
			normal := testhost.GeneratorDirs(t)[0]
			var log bytes.Buffer
			out, err := Run(Options{Root: h.Root(), Dirs: []string{normal},
				ConfigFile: c.configFile, Environ: c.environ, Log: NewLogger(&log)})
			if out != Wrote || err != nil {
				t.Fatalf("outcome %s, %v\n%s", out, err, log.String())
			}
			if data := serverDropIn(t, normal); !strings.Contains(data, c.apply) {
				t.Errorf("drop-in lacks %q:\n%s", c.apply, data)
			}
		})
	}
}

// Only systemd's own call (one to three directories, nothing else) takes
// the fast path; everything else must reach the command tree's parser.
func TestPlainArgs(t *testing.T) {
	for _, c := range []struct {
		args  []string
		plain bool
	}{
		{nil, false},
		{[]string{"/run/n"}, true},
		{[]string{"/run/n", "/run/e", "/run/l"}, true},
		{[]string{"/run/n", "/run/e", "/run/l", "/run/x"}, false},
		{[]string{"--root", "/srv", "/run/n"}, false},
		{[]string{"/run/n", "-h"}, false},
		{[]string{"--help"}, false},
		{[]string{"-"}, false},
	} {
		if got := PlainArgs(c.args); got != c.plain {
			t.Errorf("PlainArgs(%q) = %v, want %v", c.args, got, c.plain)
		}
	}
}

// OnHost decides for the root it is given with this process's environment,
// writes the normal directory only, and logs its one line to stderr under
// a root that is not the real one.
func TestOnHostWritesAndLogsForItsRoot(t *testing.T) {
	t.Setenv("SYSTEMD_IN_INITRD", "")
	t.Setenv("RKE2_PROXY_BACKEND", "iptables-legacy")
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server")
	dirs := testhost.GeneratorDirs(t)
	var stderr bytes.Buffer
	OnHost(h.Root(), hostfs.ConfigFile, "", dirs, &stderr)
	if !strings.HasPrefix(stderr.String(), Name+": info: kube-proxy backend iptables-legacy ") {
		t.Errorf("log is not the decision's one line:\n%s", stderr.String())
	}
	if data := serverDropIn(t, dirs[0]); !strings.Contains(data, "apply --backend=iptables-legacy\n") {
		t.Errorf("drop-in does not apply the environment's backend:\n%s", data)
	}
	for _, d := range dirs[1:] {
		if entries, err := os.ReadDir(d); err != nil || len(entries) != 0 {
			t.Errorf("%s: %d entries, %v: only the normal directory is written", d, len(entries), err)
		}
	}
}
