package hostplan

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Each layer reaches the decision from where the flow reads it: the config
// file under the root (the default one, or the one named), the process
// environment given, and the kernel command line the probe read.
func TestLoadReadsEveryLayer(t *testing.T) {
	const other = "/srv/proxy-backend.yaml"
	cases := []struct {
		name       string
		host       func(*testhost.Host)
		configFile string
		environ    []string
		backend    backend.Backend
		source     string
		file       string
	}{
		{name: "nothing set", host: func(*testhost.Host) {}, backend: backend.IptablesNFT, source: "auto"},
		{name: "default file", host: func(h *testhost.Host) { h.File(hostfs.ConfigFile, "backend: iptables-legacy\n") },
			backend: backend.IptablesLegacy, source: "config", file: hostfs.ConfigFile},
		{name: "named file, not the default", host: func(h *testhost.Host) {
			h.File(hostfs.ConfigFile, "backend: off\n").File(other, "backend: iptables-legacy\n")
		}, configFile: other, backend: backend.IptablesLegacy, source: "config", file: other},
		{name: "environment", host: func(*testhost.Host) {}, environ: []string{"PATH=/bin", "RKE2_PROXY_BACKEND=iptables-legacy"},
			backend: backend.IptablesLegacy, source: "env"},
		{name: "kernel command line", host: func(h *testhost.Host) { h.Cmdline("ro rke2.proxy_backend=iptables-legacy") },
			environ: []string{"RKE2_PROXY_BACKEND=iptables-nft"}, backend: backend.IptablesLegacy, source: "cmdline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).Debian12()
			c.host(h)
			p, err := Load(Host{Root: h.Root(), ConfigFile: c.configFile, Environ: c.environ}, Boot)
			if err != nil {
				t.Fatal(err)
			}
			if p.Decision.Backend != c.backend || p.Decision.Source != c.source {
				t.Errorf("decided %s (source %s), want %s (source %s); reasons %q", p.Decision.Backend, p.Decision.Source, c.backend, c.source, p.Decision.Reasons)
			}
			if p.Config.File != c.file {
				t.Errorf("config file %q, want %q", p.Config.File, c.file)
			}
			if p.Facts.Kernel.Release != "6.1.0-18-amd64" {
				t.Errorf("facts not from the root: kernel %q", p.Facts.Kernel.Release)
			}
		})
	}
}

// A broken config is the error, and the facts stay: the generator still
// wires apply into the RKE2 units it found.
func TestLoadBrokenConfigKeepsTheFacts(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").File(hostfs.ConfigFile, "backnd: auto\n")
	p, err := Load(Host{Root: h.Root()}, Boot)
	if err == nil {
		t.Fatalf("no error for an unknown key; decided %+v", p.Decision)
	}
	for _, want := range []string{hostfs.ConfigFile, `"backnd"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not name %s: %v", want, err)
		}
	}
	if len(p.Facts.RKE2.Units) != 1 || p.Facts.RKE2.Units[0].Name != "rke2-server.service" {
		t.Errorf("facts lost with the config error: units %+v", p.Facts.RKE2.Units)
	}
	if p.Decision.Backend != "" || p.Decision.Source != "" || p.Config.File != "" {
		t.Errorf("a decision or config stands in for the broken config: %+v %+v", p.Decision, p.Config)
	}
}

// What a flow reads is its probe's: the generator's leaves the tools'
// versions unread, apply's and detect's read them.
func TestProbesReadWhatTheirFlowNeeds(t *testing.T) {
	h := testhost.New(t).Debian12().File("/var/lib/dpkg/status",
		"Package: nftables\nStatus: install ok installed\nVersion: 1.0.6-2+deb12u2\n\n")
	for name, c := range map[string]struct {
		probe    facts.Options
		versions bool
	}{
		"boot":   {Boot, false},
		"apply":  {Apply, true},
		"detect": {Detect, true},
	} {
		p, err := Load(Host{Root: h.Root()}, c.probe)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Facts.Userspace.Nft.Version; (got != "") != c.versions {
			t.Errorf("%s: nft version %q read, want read: %v", name, got, c.versions)
		}
	}
}

// bench's view: the kernel and what it can run, whatever the config says.
func TestProbeCapable(t *testing.T) {
	nas := testhost.New(t).Synology44().File(hostfs.ConfigFile, "backend: nftables\n")
	c := ProbeCapable(nas.Root(), distro.RKE2)
	if c.Kernel != "4.4.302+" {
		t.Errorf("kernel %q", c.Kernel)
	}
	if !slices.Equal(c.Runnable, []backend.Backend{backend.IptablesLegacy}) {
		t.Errorf("runnable %v, want only iptables-legacy on a kernel without nf_tables", c.Runnable)
	}
	for _, b := range []backend.Backend{backend.IptablesNFT, backend.NFTables} {
		if c.Unrunnable[b] == "" {
			t.Errorf("%s is out without a reason: %v", b, c.Unrunnable)
		}
	}
	vm := ProbeCapable(testhost.New(t).Debian12().Root(), distro.RKE2)
	if !slices.Equal(vm.Runnable, backend.All) || len(vm.Unrunnable) != 0 {
		t.Errorf("debian 12: runnable %v, out %v; want all three", vm.Runnable, vm.Unrunnable)
	}
}
