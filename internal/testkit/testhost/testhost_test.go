package testhost

import (
	"compress/gzip"
	_ "embed"
	"io"
	"strings"
	"testing"
)

func TestProfilesLayOutReadableTrees(t *testing.T) {
	h := New(t).Synology44().RKE2v130().PinnedProxyMode("iptables")
	root := h.Root()

	rel, err := root.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil || string(rel) != "4.4.302+\n" {
		t.Fatalf("osrelease = %q, %v", rel, err)
	}
	data, err := root.ReadFile("/proc/config.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(zr)
	if !strings.Contains(string(text), "# CONFIG_NF_TABLES is not set\n") {
		t.Errorf("config lacks the unset NF_TABLES line:\n%s", text)
	}
	// The PCI driver link resolves through the device symlink, inside the root.
	drv, err := root.Resolve("/sys/bus/pci/devices/0000:01:00.0/driver")
	if err != nil || !strings.HasSuffix(drv, "/sys/bus/pci/drivers/ahci") {
		t.Errorf("driver resolves to %q, %v", drv, err)
	}
	if !root.Exists("/var/lib/rancher/rke2/bin/kubectl") {
		t.Error("the rke2 bin symlink does not lead to the data dir")
	}
	unit, _ := root.ReadFile("/usr/local/lib/systemd/system/rke2-server.service")
	if !strings.Contains(string(unit), "ExecStart=/usr/local/bin/rke2 server") {
		t.Errorf("server unit:\n%s", unit)
	}
}

// upstreamAgentUnit is RKE2's rke2-agent.service, byte for byte (see
// UnitCurrent for its source).
//
//go:embed units/rke2-agent.service
var upstreamAgentUnit string

// The agent units the Go tests lay out are RKE2's real one, not just
// something with the right words in it.
func TestUnitTextAgentIsRKE2sAgentUnit(t *testing.T) {
	if got := UnitText(UnitCurrent, "agent"); got != upstreamAgentUnit {
		t.Errorf("UnitText(UnitCurrent, \"agent\") differs from units/rke2-agent.service:\n%s\nwant:\n%s", got, upstreamAgentUnit)
	}
}

func TestUnitTextForAgentAndLayouts(t *testing.T) {
	agent := UnitText(UnitCurrent, "agent")
	for _, want := range []string{"(agent)", "is-active --quiet rke2-server.service", "ExecStart=/usr/local/bin/rke2 agent"} {
		if !strings.Contains(agent, want) {
			t.Errorf("agent unit lacks %q", want)
		}
	}
	root := New(t).RKE2Unit("opt", "agent", UnitLegacy).RKE2Unit("rpm", "server").Root()
	opt, _ := root.ReadFile("/etc/systemd/system/rke2-agent.service")
	for _, want := range []string{"ExecStart=/opt/rke2/bin/rke2 agent", "EnvironmentFile=-/opt/rke2/lib/systemd/system/%N.env", "Conflicts=rke2-server.service"} {
		if !strings.Contains(string(opt), want) {
			t.Errorf("opt agent unit lacks %q:\n%s", want, opt)
		}
	}
	rpm, _ := root.ReadFile("/usr/lib/systemd/system/rke2-server.service")
	if !strings.Contains(string(rpm), "ExecStart=/usr/bin/rke2 server") {
		t.Errorf("rpm unit:\n%s", rpm)
	}
}

func TestRHEL9LibSymlinkStaysInsideRoot(t *testing.T) {
	h := New(t).RHEL9()
	p, err := h.Root().Resolve("/lib/modules/" + h.Release() + "/modules.dep")
	if err != nil || !strings.HasPrefix(p, h.Dir()+"/usr/lib/modules/") {
		t.Errorf("resolved to %q, %v", p, err)
	}
	if !h.Root().Exists("/lib/modules/" + h.Release() + "/modules.dep") {
		t.Error("modules.dep missing")
	}
}
