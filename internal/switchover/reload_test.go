package switchover

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// TestRestartReloadsOnlyWhenTheDropInsChange: the restart's daemon-reload
// is left out only when the real generator, run now, would write exactly
// the drop-ins of ours systemd has (the same backend, the same verify
// wait, no drop-in more or less); a switch onto another backend, any other
// change to what the generator writes, and a generator directory that
// cannot be read all reload first.
func TestRestartReloadsOnlyWhenTheDropInsChange(t *testing.T) {
	const legacy = "backend: iptables-legacy\nverify:\n  wait: 3m\n"
	for _, c := range []struct {
		name string
		// change is what happens after the last daemon-reload's generator.
		change func(t *testing.T, root string)
		to     backend.Backend
		reload string // "" for none, else a word of the reason logged
	}{
		{"nothing changed", func(*testing.T, string) {}, backend.IptablesLegacy, ""},
		{"switch onto another backend", func(t *testing.T, root string) {
			write(t, filepath.Join(root, hostfs.ConfigFile), strings.Replace(legacy, "iptables-legacy", "iptables-nft", 1), 0o644)
		}, backend.IptablesNFT, "another backend than iptables-nft"},
		{"same backend, another verify wait", func(t *testing.T, root string) {
			write(t, filepath.Join(root, hostfs.ConfigFile), strings.Replace(legacy, "3m", "4m", 1), 0o644)
		}, backend.IptablesLegacy, "rke2-proxy-backend-verify.service.d/50-rke2-proxy-backend.conf otherwise"},
		{"a drop-in of ours the generator would not write", func(t *testing.T, root string) {
			write(t, filepath.Join(root, generatorDir, "rke2-server.service.d", hostfs.UnitDropInName), "# stale\n", 0o644)
		}, backend.IptablesLegacy, "would now write 2 drop-ins, not 3"},
		{"no generator output", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, generatorDir))
		}, backend.IptablesLegacy, "cannot be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "root")
			for p, data := range map[string]string{
				"proc/sys/kernel/osrelease":                       "6.12.0\n",
				"proc/net/ip_tables_names":                        "nat\nfilter\nmangle\n",
				"usr/local/lib/systemd/system/rke2-agent.service": "[Service]\nType=notify\n",
				hostfs.ConfigFile[1:]:                             legacy,
			} {
				write(t, filepath.Join(root, p), data, 0o644)
			}
			// What the last daemon-reload left: the generator's run.
			r := hostfs.New(root)
			if out, err := generator.Run(generator.Options{Root: r, Dirs: []string{filepath.Join(root, generatorDir)}, Log: generator.NewLogger(io.Discard)}); out != generator.Wrote {
				t.Fatalf("generator: %s: %v", out, err)
			}
			c.change(t, root)
			calls := filepath.Join(dir, "calls")
			script := filepath.Join(dir, "systemctl")
			write(t, script, "#!/bin/sh\necho \"$*\" >>"+calls+"\n", 0o755)
			var log bytes.Buffer
			u := UnitRestarter{Systemctl: Systemctl{Path: script, Timeout: 10 * time.Second}, Unit: "rke2-agent.service", Root: &r, Log: &log}
			if err := u.Restart(context.Background(), c.to); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(calls)
			want := "restart rke2-agent.service\n"
			if c.reload != "" {
				want = "daemon-reload\n" + want
			}
			if string(got) != want {
				t.Errorf("systemctl calls %q, want %q", got, want)
			}
			if c.reload == "" && !strings.Contains(log.String(), "no daemon-reload") {
				t.Errorf("the skipped reload was not said: %q", log.String())
			}
			// Each call is logged with what it took and, for the reload,
			// why it ran.
			if !tookLine.MatchString(log.String()) || (c.reload != "") != regexp.MustCompile(`systemctl daemon-reload took \S+ \(\S+ CPU\): .*`+regexp.QuoteMeta(c.reload)).MatchString(log.String()) {
				t.Errorf("the calls were not logged with their times (and the reload's reason %q): %q", c.reload, log.String())
			}
			if why := reloadNeeded(r, u.Unit, c.to); !strings.Contains(why, c.reload) || (c.reload == "") != (why == "") {
				t.Errorf("reason %q, want one saying %q", why, c.reload)
			}
		})
	}
}
