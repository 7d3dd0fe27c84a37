package facts

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The operator's IPTABLES_MODE in a k3s unit's environment is read as
// systemd merges it: the unit file, then the drop-ins sorted by name
// across /etc, /run and /usr/lib (a name in /etc hides the same in
// /usr/lib), the last assignment winning, an empty Environment= dropping
// the earlier ones, and the environment files over all of it.
func TestK3sUnitIptablesMode(t *testing.T) {
	const etc, usr = "/etc/systemd/system/k3s.service.d/", "/usr/lib/systemd/system/k3s.service.d/"
	for _, c := range []struct {
		name  string
		setup func(h *testhost.Host)
		want  *UnitEnvSetting
	}{
		{"none", func(h *testhost.Host) {}, nil},
		{"drop-in before ours", func(h *testhost.Host) { h.K3sUnitEnv("k3s", "10-iptables.conf", "IPTABLES_MODE=legacy") },
			&UnitEnvSetting{Value: "legacy", File: etc + "10-iptables.conf", Line: 2}},
		{"systemctl edit's override.conf, after ours", func(h *testhost.Host) { h.K3sUnitEnv("k3s", "override.conf", "IPTABLES_MODE=nft") },
			&UnitEnvSetting{Value: "nft", File: etc + "override.conf", Line: 2, AfterOurs: true}},
		{"the unit file", func(h *testhost.Host) { h.K3sUnitEnv("k3s", "", "IPTABLES_MODE=legacy") },
			&UnitEnvSetting{Value: "legacy", File: "/etc/systemd/system/k3s.service", Line: 31}},
		{"quoted among others", func(h *testhost.Host) {
			h.File(etc+"10-env.conf", "# ours\n[Unit]\nEnvironment=IPTABLES_MODE=nft\n[Service]\nEnvironment=\"A=b c\" \\\n  \"IPTABLES_MODE=legacy\" D=e\n")
		}, &UnitEnvSetting{Value: "legacy", File: etc + "10-env.conf", Line: 5}},
		{"/etc hides /usr/lib's file of the same name", func(h *testhost.Host) {
			h.File(usr+"10-x.conf", "[Service]\nEnvironment=IPTABLES_MODE=legacy\n").K3sUnitEnv("k3s", "10-x.conf", "IPTABLES_MODE=nft")
		}, &UnitEnvSetting{Value: "nft", File: etc + "10-x.conf", Line: 2}},
		{"names sort across directories", func(h *testhost.Host) {
			h.File(usr+"20-a.conf", "[Service]\nEnvironment=IPTABLES_MODE=nft\n").K3sUnitEnv("k3s", "10-b.conf", "IPTABLES_MODE=legacy")
		}, &UnitEnvSetting{Value: "nft", File: usr + "20-a.conf", Line: 2}},
		{"an empty Environment= resets", func(h *testhost.Host) {
			h.K3sUnitEnv("k3s", "10-a.conf", "IPTABLES_MODE=legacy").File(etc+"20-b.conf", "[Service]\nEnvironment=\n")
		}, nil},
		{"install.sh's .env wins and is rewritten", func(h *testhost.Host) {
			h.K3sUnitEnv("k3s", "10-a.conf", "IPTABLES_MODE=nft").File("/etc/systemd/system/k3s.service.env", "K3S_TOKEN=x\nIPTABLES_MODE=legacy\n")
		}, &UnitEnvSetting{Value: "legacy", File: "/etc/systemd/system/k3s.service.env", Line: 2, EnvFile: true, Rewritten: true}},
		{"/etc/default/k3s", func(h *testhost.Host) { h.File("/etc/default/k3s", "IPTABLES_MODE='legacy'\n") },
			&UnitEnvSetting{Value: "legacy", File: "/etc/default/k3s", Line: 1, EnvFile: true}},
		{"a drop-in masked with /dev/null hides the vendor's", func(h *testhost.Host) {
			h.File(usr+"10-x.conf", "[Service]\nEnvironment=IPTABLES_MODE=legacy\n").DevNull("/dev/null").Symlink(etc+"10-x.conf", "/dev/null")
		}, nil},
		{"our own drop-in name in /etc is not ours", func(h *testhost.Host) {
			h.K3sUnitEnv("k3s", hostfs.UnitDropInName, "IPTABLES_MODE=legacy")
		}, &UnitEnvSetting{Value: "legacy", File: etc + hostfs.UnitDropInName, Line: 2}},
	} {
		h := testhost.New(t).Debian12().K3sUnit("k3s", "server")
		c.setup(h)
		h.File("/run/systemd/generator/k3s.service.d/"+hostfs.UnitDropInName, "[Service]\nEnvironment=IPTABLES_MODE=nft\n")
		f := Probe(h.Root(), Options{Distribution: distro.Kind("k3s")})
		if len(f.RKE2.Units) != 1 {
			t.Fatalf("%s: units %+v", c.name, f.RKE2.Units)
		}
		got := f.RKE2.Units[0].IptablesMode
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if len(f.Unreadable) > 0 {
			t.Errorf("%s: unreadable %q", c.name, f.Unreadable)
		}
	}
}

// A value k3s-root's iptables-detect.sh cannot run is an error naming
// the file, the line, the key, the value and what to write instead.
func TestK3sUnitIptablesModeInvalid(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sUnitEnv("k3s", "10-iptables.conf", "IPTABLES_MODE=nftables")
	f := Probe(h.Root(), Options{Distribution: distro.Kind("k3s")})
	text := strings.Join(f.Unreadable, "\n")
	for _, want := range []string{"/etc/systemd/system/k3s.service.d/10-iptables.conf line 2", `IPTABLES_MODE="nftables"`, "only legacy and nft", "write IPTABLES_MODE=legacy or IPTABLES_MODE=nft there"} {
		if !strings.Contains(text, want) {
			t.Errorf("the error lacks %q:\n%s", want, text)
		}
	}
}

// A FIFO planted as a k3s drop-in does not hang the probe (the generator
// reads these at boot): it is unreadable, named, and the rest is read.
func TestK3sUnitDropInFIFO(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sUnitEnv("k3s", "10-iptables.conf", "IPTABLES_MODE=legacy").
		FIFO("/etc/systemd/system/k3s.service.d/20-fifo.conf")
	f := Probe(h.Root(), Options{Distribution: distro.Kind("k3s")})
	if got := f.RKE2.Units[0].IptablesMode; got == nil || got.Value != "legacy" {
		t.Errorf("IPTABLES_MODE %+v, want legacy from 10-iptables.conf", got)
	}
	if text := strings.Join(f.Unreadable, "\n"); !strings.Contains(text, "/etc/systemd/system/k3s.service.d/20-fifo.conf: not a regular file") {
		t.Errorf("the FIFO is not named: %q", text)
	}
}
