package facts

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// k3s runs flannel and kube-router's network policy unless its config (a
// drop-in over the main file) or its command line turns them off; the
// command line wins, and each answer names where it was set.
func TestReadK3sNetwork(t *testing.T) {
	withFlags := func(flags ...string) string {
		return strings.Replace(testhost.UnitK3s, "    server \\", "    server \\\n\t'"+strings.Join(flags, "' \\\n\t'")+"' \\", 1)
	}
	cases := []struct {
		name                  string
		config, dropIn, unit  string
		flannel, netpol       bool
		flannelSrc, netpolSrc string
	}{
		{"defaults", "", "", "", true, true, "k3s's default", "k3s's default"},
		{"config turns both off", "flannel-backend: none\ndisable-network-policy: true\n", "", "", false, false,
			"flannel-backend: none in /etc/rancher/k3s/config.yaml", "disable-network-policy: true in /etc/rancher/k3s/config.yaml"},
		{"a drop-in turns flannel back on", "flannel-backend: none\n", "flannel-backend: host-gw\n", "", true, true,
			"flannel-backend: host-gw in /etc/rancher/k3s/config.yaml.d/50-local.yaml", "k3s's default"},
		{"install.sh's flags win over the config", "flannel-backend: vxlan\ndisable-network-policy: false\n", "",
			withFlags("--flannel-backend=none", "--disable-network-policy"), false, false,
			"--flannel-backend=none on k3s's command line", "--disable-network-policy=true on k3s's command line"},
		{"a flag with its value as the next word", "", "", withFlags("--flannel-backend", "none"), false, true,
			"--flannel-backend=none on k3s's command line", "k3s's default"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).Debian12().K3sUnit("k3s", "server")
			if c.unit != "" {
				h.File("/etc/systemd/system/k3s.service", c.unit)
			}
			if c.config != "" {
				h.K3sConfig("config.yaml", c.config)
			}
			if c.dropIn != "" {
				h.K3sConfig("config.yaml.d/50-local.yaml", c.dropIn)
			}
			n, unreadable := ReadK3sNetwork(h.Root(), distro.Kind("k3s"))
			if len(unreadable) != 0 {
				t.Fatalf("unreadable: %q", unreadable)
			}
			if n.Flannel != c.flannel || n.NetworkPolicy != c.netpol || !strings.Contains(n.FlannelSource, c.flannelSrc) || !strings.Contains(n.NetworkPolicySource, c.netpolSrc) {
				t.Errorf("got %+v\nwant flannel %t (%q), network policy %t (%q)", n, c.flannel, c.flannelSrc, c.netpol, c.netpolSrc)
			}
		})
	}
}

// Property: whatever surrounds it, the last --flannel-backend=V on a line
// is the value read, and a word that is no flag is never taken for one.
func FuzzFlagValue(f *testing.F) {
	f.Add("/usr/local/bin/k3s server '--node-ip=10.0.0.1'", "none")
	f.Add("k3s agent --flannel-backend=vxlan", "host-gw")
	f.Add("", "wireguard-native")
	f.Fuzz(func(t *testing.T, line, value string) {
		if strings.ContainsAny(value, " \t\n\r\v\f\u0085\u00a0'\"") || value == "" {
			return
		}
		before := unitWords(line)
		if v, ok := flagValue(before, KeyFlannelBackend, false); ok && !strings.Contains(line, KeyFlannelBackend) {
			t.Fatalf("%q: read flannel-backend %q from a line without it", line, v)
		}
		words := append(before, "--"+KeyFlannelBackend+"="+value)
		if v, ok := flagValue(words, KeyFlannelBackend, false); !ok || v != value {
			t.Fatalf("%q + --flannel-backend=%s: read %q, %t", line, value, v, ok)
		}
	})
}
