package facts

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func TestProbeRKE2Layouts(t *testing.T) {
	for _, c := range []struct {
		layout, role, unit, path, binary string
	}{
		{"tarball", "server", testhost.UnitCurrent, "/usr/local/lib/systemd/system/rke2-server.service", "/usr/local/bin/rke2"},
		{"opt", "agent", testhost.UnitLegacy, "/etc/systemd/system/rke2-agent.service", "/opt/rke2/bin/rke2"},
		{"rpm", "server", testhost.UnitCurrent, "/usr/lib/systemd/system/rke2-server.service", "/usr/bin/rke2"},
	} {
		t.Run(c.layout, func(t *testing.T) {
			f := Probe(testhost.New(t).RKE2Unit(c.layout, c.role, c.unit).Root(), Options{})
			want := []RKE2Unit{{Name: "rke2-" + c.role + ".service", Path: c.path, Role: c.role, Binary: c.binary}}
			if !slices.Equal(f.RKE2.Units, want) {
				t.Errorf("units %+v, want %+v", f.RKE2.Units, want)
			}
			if f.RKE2.ConfigFile != hostfs.RKE2ConfigFile {
				t.Errorf("config file %q", f.RKE2.ConfigFile)
			}
		})
	}
}

// The units distro.Find found are read where it found them, in the
// probe's order (server first), not looked up in every unit directory again.
func TestProbeReadsTheUnitsFound(t *testing.T) {
	h := testhost.New(t).RKE2Unit("tarball", "server").RKE2Unit("rpm", "agent")
	found := distro.Find(h.Root(), "")
	f := Probe(h.Root(), Options{Units: found.Units})
	want := []RKE2Unit{
		{Name: "rke2-server.service", Path: "/usr/local/lib/systemd/system/rke2-server.service", Role: "server", Binary: "/usr/local/bin/rke2"},
		{Name: "rke2-agent.service", Path: "/usr/lib/systemd/system/rke2-agent.service", Role: "agent", Binary: "/usr/bin/rke2"},
	}
	if !slices.Equal(f.RKE2.Units, want) {
		t.Errorf("units %+v, want %+v", f.RKE2.Units, want)
	}
	// Only the unit named is read: a unit Find did not report is not there.
	f = Probe(h.Root(), Options{Units: found.Units[:1]})
	if len(f.RKE2.Units) != 1 || f.RKE2.Units[0].Role != "agent" {
		t.Errorf("units %+v, want the agent's only", f.RKE2.Units)
	}
}

func TestProbeRKE2UnitPrecedenceAndEnv(t *testing.T) {
	// /etc/systemd/system shadows /usr/local; the env files set RKE2_CONFIG_FILE,
	// the later file wins, and files override Environment= as in systemd.
	unit := strings.Replace(testhost.UnitCurrent, "ExecStart=/usr/local/bin/rke2 server",
		"Environment=\"RKE2_CONFIG_FILE=/from/unit.yaml\" OTHER=x\nExecStart=\nExecStart=-/custom/rke2 server \\\n  --debug", 1)
	h := testhost.New(t).RKE2Unit("tarball", "server").
		File("/etc/systemd/system/rke2-server.service", unit).
		EnvFile("/etc/default/rke2-server", "# comment", "RKE2_CONFIG_FILE=/etc/default.yaml").
		EnvFile("/etc/sysconfig/rke2-server", `RKE2_CONFIG_FILE="/srv/rke2/config.yaml"`).
		RKE2Config("/srv/rke2/config.yaml", "kube-proxy-arg: [proxy-mode=nftables]\n").
		RKE2Config("/srv/rke2/config.yaml.d/20-env.yaml", "kube-proxy-extra-env+: [IPTABLES_MODE=nft]\n")
	f := Probe(h.Root(), Options{})
	u := f.RKE2.Units
	if len(u) != 1 || u[0].Path != "/etc/systemd/system/rke2-server.service" || u[0].Binary != "/custom/rke2" || u[0].ConfigFile != "/srv/rke2/config.yaml" {
		t.Fatalf("units %+v", u)
	}
	if f.RKE2.ConfigFile != "/srv/rke2/config.yaml" {
		t.Errorf("config file %q", f.RKE2.ConfigFile)
	}
	if v, file := f.RKE2.Config.ProxyMode(); v != "nftables" || file != "/srv/rke2/config.yaml" {
		t.Errorf("proxy mode %q from %q", v, file)
	}
	if v, _ := f.RKE2.Config.IptablesMode(); v != "nft" {
		t.Errorf("iptables mode %q", v)
	}
}

func TestProbeRKE2UnitEnvironmentOnly(t *testing.T) {
	unit := strings.Replace(testhost.UnitCurrent, "KillMode=process", "KillMode=process\nEnvironment=RKE2_CONFIG_FILE=/from/unit.yaml", 1)
	f := Probe(testhost.New(t).RKE2Unit("tarball", "agent", unit).Root(), Options{})
	if len(f.RKE2.Units) != 1 || f.RKE2.Units[0].ConfigFile != "/from/unit.yaml" || f.RKE2.ConfigFile != "/from/unit.yaml" {
		t.Errorf("units %+v, config %q", f.RKE2.Units, f.RKE2.ConfigFile)
	}
}

func TestProbeRKE2Version(t *testing.T) {
	f := Probe(testhost.New(t).RKE2v134().Root(), Options{})
	if f.RKE2.Version != "v1.34.10+rke2r1" || !strings.HasPrefix(f.RKE2.VersionSource, "/var/lib/rancher/rke2/bin -> /var/lib/rancher/rke2/data/v1.34.10-rke2r1-") {
		t.Errorf("version %q from %q", f.RKE2.Version, f.RKE2.VersionSource)
	}
	if f.RKE2.Kubernetes != (rke2.KubeVersion{Major: 1, Minor: 34, Patch: 10}) {
		t.Errorf("kubernetes %+v", f.RKE2.Kubernetes)
	}

	// Without the bin link the newest data directory wins.
	h := testhost.New(t).
		Mkdir("/var/lib/rancher/rke2/data/v1.30.11-rke2r1-0123456789ab").
		Mkdir("/var/lib/rancher/rke2/data/v1.30.11-rke2r2-0123456789ab").
		Mkdir("/var/lib/rancher/rke2/data/v1.30.9-rke2r1-0123456789ab").
		Mkdir("/var/lib/rancher/rke2/data/sha256-not-a-version")
	f = Probe(h.Root(), Options{})
	if f.RKE2.Version != "v1.30.11+rke2r2" || f.RKE2.VersionSource != "/var/lib/rancher/rke2/data/v1.30.11-rke2r2-0123456789ab" {
		t.Errorf("version %q from %q", f.RKE2.Version, f.RKE2.VersionSource)
	}

	// data-dir in RKE2's config moves the place to look.
	h = testhost.New(t).RKE2Config("config.yaml", "data-dir: /srv/rke2\n").Mkdir("/srv/rke2/data/v1.31.7-rke2r1-aaaaaaaaaaaa")
	if f = Probe(h.Root(), Options{}); f.RKE2.Version != "v1.31.7+rke2r1" {
		t.Errorf("version with data-dir: %q", f.RKE2.Version)
	}
}
