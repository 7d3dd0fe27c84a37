package verify

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// The status and the textfile say the proxy mode beside the backend: ipvs
// when the plan keeps it, the backend's own mode otherwise; the existing
// rke2_proxy_backend_info series stays as it was, and promtool accepts
// the textfile.
func TestModeBesideBackend(t *testing.T) {
	fake := newFake(t, skeleton(t, backend.IptablesNFT, rke2.KubeVersion{}, 0))
	for _, c := range []struct {
		opts Options
		want string
	}{
		{Options{Expect: backend.IptablesNFT, Reader: fake}, "iptables"},
		{Options{Expect: backend.IptablesNFT, Reader: fake, ProxyMode: ProxyModeIPVS}, "ipvs"},
		{Options{Expect: backend.NFTables, Reader: fake}, "nftables"},
	} {
		res := run(t, c.opts)
		if res.Mode != c.want {
			t.Errorf("%s, plan mode %q: Mode %q, want %q", c.opts.Expect, c.opts.ProxyMode, res.Mode, c.want)
		}
		m := Metrics(res, time.Unix(1700000000, 0))
		for _, want := range []string{
			`rke2_proxy_backend_info{backend="` + string(c.opts.Expect) + `"} 1`,
			`rke2_proxy_backend_proxy_mode_info{backend="` + string(c.opts.Expect) + `",mode="` + c.want + `"} 1`,
		} {
			if !bytes.Contains(m, []byte(want)) {
				t.Errorf("metrics lack %q:\n%s", want, m)
			}
		}
		promtoolCheck(t, m)
		root := hostfs.New(t.TempDir())
		if err := WriteStatus(root, res); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(root.Dir(), hostfs.StatusFile))
		if err != nil || !strings.Contains(string(b), `"mode": "`+c.want+`"`) || !strings.Contains(string(b), `"expect": "`+string(c.opts.Expect)+`"`) {
			t.Errorf("status.json lacks mode %q beside the backend: %v\n%s", c.want, err, b)
		}
	}
}

func promtoolCheck(t *testing.T, text []byte) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed (CI installs Debian's prometheus package)")
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s\non:\n%s", err, out, text)
	}
}
