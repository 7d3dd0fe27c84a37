package distro_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Each install layout is found as the distribution it is, with the units
// systemd would load.
func TestFind(t *testing.T) {
	cases := []struct {
		name     string
		host     func(*testhost.Host) *testhost.Host
		override distro.Kind
		kind     distro.Kind
		units    []string
		note     bool
	}{
		{name: "nothing installed", host: func(h *testhost.Host) *testhost.Host { return h.Debian12() }, kind: distro.RKE2},
		{name: "rke2 tarball server", host: func(h *testhost.Host) *testhost.Host { return h.Debian12().RKE2Unit("tarball", "server") },
			kind: distro.RKE2, units: []string{"rke2-server.service"}},
		{name: "rke2 rpm both", host: func(h *testhost.Host) *testhost.Host {
			return h.RHEL9().RKE2Unit("rpm", "server").RKE2Unit("rpm", "agent")
		},
			kind: distro.RKE2, units: []string{"rke2-agent.service", "rke2-server.service"}},
		{name: "k3s server", host: func(h *testhost.Host) *testhost.Host { return h.Debian12().K3sUnit("k3s", "server") },
			kind: distro.Kind("k3s"), units: []string{"k3s.service"}},
		{name: "k3s agent on a NAS", host: func(h *testhost.Host) *testhost.Host { return h.Synology44().K3sUnit("k3s-agent", "agent") },
			kind: distro.Kind("k3s"), units: []string{"k3s-agent.service"}},
		{name: "k3s INSTALL_K3S_NAME", host: func(h *testhost.Host) *testhost.Host { return h.Debian12().K3sUnit("k3s-edge", "server") },
			kind: distro.Kind("k3s"), units: []string{"k3s-edge.service"}},
		{name: "a k3s-named unit that runs something else is not k3s's", host: func(h *testhost.Host) *testhost.Host {
			return h.Debian12().File("/etc/systemd/system/k3s-backup.service", "[Service]\nExecStart=/usr/bin/restic backup /var/lib/rancher\n")
		}, kind: distro.RKE2},
		{name: "k3s unit in /usr/lib, from a package", host: func(h *testhost.Host) *testhost.Host {
			return h.Debian12().File("/usr/lib/systemd/system/k3s.service", "[Service]\nExecStart=-/usr/bin/k3s server\n")
		}, kind: distro.Kind("k3s"), units: []string{"k3s.service"}},
		{name: "k3s data dir only", host: func(h *testhost.Host) *testhost.Host { return h.Debian12().Mkdir("/var/lib/rancher/k3s") }, kind: distro.Kind("k3s")},
		{name: "both: RKE2 kept, with a note", host: func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2Unit("tarball", "server").K3sUnit("k3s", "server")
		}, kind: distro.RKE2, units: []string{"rke2-server.service"}, note: true},
		{name: "both, --distribution k3s", host: func(h *testhost.Host) *testhost.Host {
			return h.Debian12().RKE2Unit("tarball", "server").K3sUnit("k3s", "server")
		}, override: distro.Kind("k3s"), kind: distro.Kind("k3s"), units: []string{"k3s.service"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := distro.Find(c.host(testhost.New(t)).Root(), c.override)
			if d.Kind != c.kind || !slices.Equal(d.UnitNames(), c.units) || (d.Note != "") != c.note {
				t.Errorf("found %s %v (note %q, source %q), want %s %v (note: %v)", d.Kind, d.UnitNames(), d.Note, d.Source, c.kind, c.units, c.note)
			}
			if d.Installed() != (len(c.units) > 0) || d.Source == "" {
				t.Errorf("installed %v, source %q", d.Installed(), d.Source)
			}
		})
	}
}

func TestLayout(t *testing.T) {
	if distro.Kind("k3s").ConfigFile() != "/etc/rancher/k3s/config.yaml" || distro.RKE2.ConfigFile() != "/etc/rancher/rke2/config.yaml" {
		t.Errorf("config files %s %s", distro.Kind("k3s").ConfigFile(), distro.RKE2.ConfigFile())
	}
	if !distro.Kind("k3s").Profile().KubeProxyEmbedded || distro.RKE2.Profile().KubeProxyEmbedded {
		t.Error("kube-proxy's environment: k3s's is the unit's, RKE2's is in its config")
	}
	if got := distro.Kind("k3s").Profile().AuxDir("/data/k3s"); got != "/data/k3s/data/current/bin/aux" || distro.RKE2.Profile().AuxDir("/x") != "" {
		t.Errorf("aux dir %q", got)
	}
	if p := distro.Kind("").Profile(); p.Kind != distro.RKE2 || p.Name != "RKE2" {
		t.Errorf(`"" is RKE2's profile, got %+v`, p)
	}
	for in, want := range map[string]distro.Kind{"": "", "auto": "", "rke2": distro.RKE2, "k3s": distro.Kind("k3s")} {
		if got, err := distro.Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := distro.Parse("k0s"); err == nil || !strings.Contains(err.Error(), `"k0s"`) {
		t.Errorf("Parse(k0s): %v", err)
	}
}

// K3sProgram is the unit parser: a property over arbitrary text is that it
// says yes only when some ExecStart= line's program is named k3s.
func FuzzK3sProgram(f *testing.F) {
	f.Add([]byte(testhost.UnitK3s))
	f.Add([]byte("[Service]\nExecStart=/usr/bin/restic\n"))
	f.Add([]byte("[Unit]\nExecStart=/usr/local/bin/k3s\n"))
	f.Fuzz(func(t *testing.T, unit []byte) {
		if (distro.K3sProgram(unit) != "") && !strings.Contains(string(unit), "k3s") {
			t.Errorf("K3sProgram true for a unit that never names k3s: %q", unit)
		}
		if (distro.K3sProgram(unit) != "") && !strings.Contains(string(unit), "[Service]") {
			t.Errorf("K3sProgram true outside [Service]: %q", unit)
		}
	})
}

func TestK3sProgram(t *testing.T) {
	for text, want := range map[string]bool{
		testhost.UnitK3s: true,
		"[Service]\nExecStart=/usr/local/bin/k3s agent\nExecStart=/usr/bin/other\n": false, // the last one counts
		"[Unit]\nExecStart=/usr/local/bin/k3s\n":                                    false,
		"[Service]\nExecStart=\n":                                                   false,
		"[Service]\nExecStart=@/opt/k3s/k3s server\n":                               true,
	} {
		if got := distro.K3sProgram([]byte(text)) != ""; got != want {
			t.Errorf("K3sProgram(%q) = %v, want %v", text, got, want)
		}
	}
}

// The flag value takes exactly Parse's names and keeps the last good value
// when a wrong one is refused.
func TestKindFlag(t *testing.T) {
	var k distro.Kind
	for _, good := range []struct{ in, want string }{{"k3s", "k3s"}, {"rke2", "rke2"}, {"auto", ""}} {
		if err := k.Set(good.in); err != nil || k.String() != good.want {
			t.Fatalf("Set(%q) = %v, value %q; want %q", good.in, err, k.String(), good.want)
		}
	}
	_ = k.Set("k3s")
	if err := k.Set("k8s"); err == nil || k != distro.Kind("k3s") {
		t.Fatalf("Set(k8s) = %v, value %q; want an error and k3s kept", err, k)
	}
}

// A unit path under something that is not a directory is no unit, as the
// probe reads it (and systemd loads it): the next unit directory's counts.
func TestFindSkipsPathsUnderAFile(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").File("/etc/systemd/system", "a file, not a directory\n")
	d := distro.Find(h.Root(), "")
	if len(d.Units) != 1 || d.Units[0].Path != "/usr/local/lib/systemd/system/rke2-server.service" {
		t.Errorf("found %+v, want the tarball's unit", d.Units)
	}
}
