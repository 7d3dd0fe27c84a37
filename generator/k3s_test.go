package generator

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// runHost runs the generator with the host's own probe (no Decider).
func runHost(t *testing.T, h *testhost.Host, kind distro.Kind) (Outcome, map[string]string, string) {
	t.Helper()
	dirs := testhost.GeneratorDirs(t)
	var log bytes.Buffer
	out, _ := Run(Options{Root: h.Root(), Dirs: dirs, Environ: []string{"SYSTEMD_IN_INITRD="}, Distribution: kind, Log: NewLogger(&log)})
	return out, readDir(t, dirs[0]), log.String()
}

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	for _, sub := range mustReadDir(t, dir) {
		for _, f := range mustReadDir(t, dir+"/"+sub) {
			data, err := hostfs.New(dir).ReadFile(sub + "/" + f)
			if err != nil {
				t.Fatal(err)
			}
			files[sub+"/"+f] = string(data)
		}
	}
	return files
}

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := hostfs.New(dir).ReadDir("/")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Item 5 of issue 23: without RKE2 or k3s the generator stops before the
// probe. A /proc/config.gz that is a pipe and a PCI tree that is a pipe
// would each be reported by the probe (one warning line each): the log
// holding only the "nothing to do" line shows neither was read.
func TestGeneratorProbesNothingWithoutADistribution(t *testing.T) {
	h := testhost.New(t).Debian12().FIFO(hostfs.ProcConfigGz).FIFO(hostfs.PCIDevicesDir).FIFO(hostfs.ConfigFile)
	for _, kind := range []distro.Kind{"", distro.RKE2, distro.Kind("k3s")} {
		out, files, log := runHost(t, h, kind)
		if out != NoRKE2 || len(files) != 0 || strings.Count(log, "\n") != 1 || !strings.Contains(log, "nothing to do") {
			t.Errorf("distribution %q: outcome %s, files %v, log %q; want one line and no probe", kind, out, files, log)
		}
	}
}

// On k3s the drop-ins go to the k3s units, and IPTABLES_MODE to their
// Environment= (k3s runs kube-proxy in its own process).
func TestGeneratorK3sUnits(t *testing.T) {
	cases := map[string]struct {
		host  *testhost.Host
		units []string
		mode  string
	}{
		"server":           {testhost.New(t).Debian12().K3sUnit("k3s", "server"), []string{"k3s.service"}, "nft"},
		"agent on a NAS":   {testhost.New(t).Synology44().K3sUnit("k3s-agent", "agent"), []string{"k3s-agent.service"}, "legacy"},
		"INSTALL_K3S_NAME": {testhost.New(t).Debian12().K3sUnit("k3s-edge", "agent"), []string{"k3s-edge.service"}, "nft"},
	}
	for name, c := range cases {
		out, files, log := runHost(t, c.host, "")
		if out != Wrote {
			t.Fatalf("%s: outcome %s, log %q", name, out, log)
		}
		for _, u := range c.units {
			got := files[u+".d/50-rke2-proxy-backend.conf"]
			for _, want := range []string{"ExecStartPre=" + hostfs.Binary + " apply --backend=", "\nEnvironment=IPTABLES_MODE=" + c.mode + "\n"} {
				if !strings.Contains(got, want) {
					t.Errorf("%s: %s drop-in lacks %q:\n%s", name, u, want, got)
				}
			}
		}
		for f := range files {
			if strings.HasPrefix(f, "rke2-server") || strings.HasPrefix(f, "rke2-agent") || strings.Contains(f, ".env") {
				t.Errorf("%s: wrote %s on a k3s node", name, f)
			}
		}
	}
}

// A broken operator config on k3s wires apply (without a backend) into the
// k3s unit, as on RKE2: apply exits 2 naming the key and k3s does not start
// on a drop-in an earlier boot left.
func TestGeneratorK3sBrokenConfig(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").File(hostfs.ConfigFile, "backnd: auto\n")
	out, files, log := runHost(t, h, "")
	got := files["k3s.service.d/50-rke2-proxy-backend.conf"]
	if out != BrokenConfig || !strings.Contains(got, "ExecStartPre="+hostfs.Binary+" apply\n") || strings.Contains(got, "IPTABLES_MODE") ||
		!strings.Contains(log, `"backnd"`) || !strings.Contains(log, "k3s.service will run") {
		t.Errorf("outcome %s, log %q, drop-in:\n%s", out, log, got)
	}
}
