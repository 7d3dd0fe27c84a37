package facts

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// probeWithin runs Probe and fails the test if it does not return in time:
// a FIFO read the old way blocks forever.
func probeWithin(t *testing.T, root hostfs.Root, opts Options) Facts {
	t.Helper()
	done := make(chan Facts, 1)
	go func() { done <- Probe(root, opts) }()
	select {
	case f := <-done:
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("Probe did not return within 10s")
		return Facts{}
	}
}

// Every file the issue named as a hang, as a FIFO: the probe returns and
// names the file and what it is.
func TestProbeFIFOsNeverBlock(t *testing.T) {
	for _, hostPath := range []string{
		"/etc/rancher/rke2/config.yaml",
		"/etc/rancher/rke2/config.yaml.d/70-fifo.yaml",
		"/etc/default/rke2-server",
		"/usr/local/lib/systemd/system/rke2-server.service",
		"/proc/cmdline",
		"/proc/config.gz",
	} {
		t.Run(strings.ReplaceAll(hostPath, "/", "_"), func(t *testing.T) {
			h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").Cmdline("quiet").FIFO(hostPath)
			f := probeWithin(t, h.Root(), Options{})
			joined := strings.Join(f.Unreadable, "\n")
			if !strings.Contains(joined, hostPath) || !strings.Contains(joined, "named pipe") {
				t.Errorf("unreadable does not name %s as a named pipe:\n%s", hostPath, joined)
			}
		})
	}
}

func TestProbeDevZeroDropInIsRefused(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").
		DevZero("/dev/zero").Symlink("/etc/rancher/rke2/config.yaml.d/70-zero.yaml", "/dev/zero")
	f := probeWithin(t, h.Root(), Options{})
	want := "/etc/rancher/rke2/config.yaml.d/70-zero.yaml: not a regular file but a character device"
	if joined := strings.Join(f.Unreadable, "\n"); !strings.Contains(joined, want) {
		t.Errorf("unreadable lacks %q:\n%s", want, joined)
	}
}

// A kernel config longer than the cap is reported, not read as "every
// later option is off".
func TestProbeOversizedKernelConfigIsReported(t *testing.T) {
	line := []byte("# CONFIG_PADDING_OPTION_THAT_IS_LONG is not set\n")
	h := testhost.New(t).Kernel("6.1.0-18-amd64").
		GzipFile("/proc/config.gz", line, hostfs.MaxKernelConfig/len(line)+1)
	f := probeWithin(t, h.Root(), Options{})
	want := "/proc/config.gz: decompresses to more than 16 MiB, the most read from this kind of file"
	if joined := strings.Join(f.Unreadable, "\n"); !strings.Contains(joined, want) {
		t.Errorf("unreadable lacks %q:\n%s", want, joined)
	}
	if f.Kernel.ConfigSource != "" {
		t.Errorf("an oversized config was used: %s", f.Kernel.ConfigSource)
	}
	// The same as a plain file: refused by size, not cut.
	h = testhost.New(t).Kernel("6.1.0-18-amd64").File("/boot/config-6.1.0-18-amd64",
		strings.Repeat(string(line), hostfs.MaxKernelConfig/len(line)+1))
	f = probeWithin(t, h.Root(), Options{})
	want = "/boot/config-6.1.0-18-amd64: larger than 16 MiB"
	if joined := strings.Join(f.Unreadable, "\n"); !strings.Contains(joined, want) {
		t.Errorf("unreadable lacks %q:\n%s", want, joined)
	}
}

func TestProbeOSReleaseWithNUL(t *testing.T) {
	f := Probe(testhost.New(t).File("/proc/sys/kernel/osrelease", "6.1.0\x00-18-amd64\n").Root(), Options{})
	want := []string{"/proc/sys/kernel/osrelease: holds a NUL byte at offset 5, which no kernel release has: the kernel version is unknown; a real kernel always writes one, so check --root"}
	if !slices.Equal(f.Unreadable, want) {
		t.Errorf("unreadable:\n%q\nwant\n%q", f.Unreadable, want)
	}
	if f.Kernel.Release != "" || f.Kernel.Major != 0 {
		t.Errorf("a release with a NUL was used: %+v", f.Kernel)
	}
}

// systemd takes nothing after "--" on the kernel command line: those words
// are init's arguments.
func TestProbeCmdlineStopsAtDoubleDash(t *testing.T) {
	f := Probe(testhost.New(t).Cmdline("root=/dev/sda1 quiet -- rke2.proxy_backend=iptables-legacy single").Root(), Options{})
	if want := []string{"root=/dev/sda1", "quiet"}; !slices.Equal(f.Cmdline, want) {
		t.Errorf("cmdline %q, want %q", f.Cmdline, want)
	}
}

// A PCI trigger on the 10,000th device is seen: every device is scanned.
func TestProbeScansThousandsOfPCIDevices(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000 sysfs devices")
	}
	const n = 10000
	h := testhost.NewInMemory(t).ManyPCI(n - 1)
	last := testhost.PCIAddress(n - 1)
	h.PCI(last, "1b4b", "9235", "ahci")
	f := Probe(h.Root(), Options{})
	if len(f.Hardware.PCI) != n {
		t.Fatalf("read %d PCI devices, want %d", len(f.Hardware.PCI), n)
	}
	i := slices.IndexFunc(f.Hardware.PCI, func(d PCIDevice) bool { return d.Address == last })
	if i < 0 || f.Hardware.PCI[i].Vendor != "1b4b" || f.Hardware.PCI[i].Device != "9235" {
		t.Errorf("device %s not read: %v", last, i)
	}
	for _, p := range f.Problems {
		if strings.Contains(p, hostfs.PCIDevicesDir) {
			t.Errorf("problem about PCI devices below the cap: %s", p)
		}
	}
}

// Whatever a file holds, a message about it never quotes it: a link to
// /etc/shadow planted where the probe reads must not put a hash in the
// journal.
func TestProbeMessagesNeverQuoteAFile(t *testing.T) {
	const hash = "$6$Zs4lT$HASHVALUEHASHVALUE"
	shadow := "root:" + hash + ":19700:0:99999:7:::\ndaemon:*:19700:0:99999:7:::\n"
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").
		File("/shadow", shadow).
		Symlink("/proc/sys/kernel/osrelease", "/shadow").
		Symlink("/proc/modules", "/shadow").
		Symlink("/lib/modules/6.1.0-18-amd64/modules.dep", "/shadow").
		Symlink("/boot/config-6.1.0-18-amd64", "/shadow").
		Symlink("/proc/config.gz", "/shadow").
		Symlink("/run/rke2-proxy-backend/plan.json", "/shadow").
		Symlink("/etc/rancher/rke2/config.yaml", "/shadow").
		Symlink("/etc/rancher/rke2/config.yaml.d/70-x.yaml", "/shadow")
	f := Probe(h.Root(), Options{})
	all := strings.Join(append(f.Problems, f.Unreadable...), "\n")
	for _, secret := range []string{"HASHVALUE", "Zs4lT", "root:", "daemon"} {
		if strings.Contains(all, secret) {
			t.Errorf("a message quotes the file (%q):\n%s", secret, all)
		}
	}
	if len(f.Unreadable) < 4 {
		t.Errorf("the planted files were not all reported:\n%s", all)
	}
}
