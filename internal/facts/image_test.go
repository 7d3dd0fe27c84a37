package facts

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A node image (no /proc under the root) is judged by the kernel installed
// in it, and what only a running machine can tell is said as such, not
// reported as a problem (issue 30, What to build 4).
func TestProbeImageRoot(t *testing.T) {
	r := testhost.DebianCloudRelease
	h := testhost.New(t).DebianCloudKernel().RKE2Unit("tarball", "server")
	f := Probe(h.Root(), Options{Live: notCalled(t), RKE2Binary: true, ToolVersions: true, HostServices: true})
	if !f.Image || f.Kernel.Release != r || f.Kernel.ReleaseSource != "installed in the image: /lib/modules/"+r || f.Kernel.Major != 6 || f.Kernel.Minor != 1 {
		t.Fatalf("image %v, kernel %q from %q (%d.%d)", f.Image, f.Kernel.Release, f.Kernel.ReleaseSource, f.Kernel.Major, f.Kernel.Minor)
	}
	if f.Kernel.ConfigSource != "/boot/config-"+r || f.Kernel.Config["NF_TABLES"] != Module || !f.Modules.AvailableKnown || !HasModule(f.Modules.Available, "nf_tables") {
		t.Errorf("the image's kernel was not read: config %s, NF_TABLES=%s, tree known %v", f.Kernel.ConfigSource, f.Kernel.Config["NF_TABLES"], f.Modules.AvailableKnown)
	}
	if len(f.Unreadable) != 0 {
		t.Errorf("unreadable: %q", f.Unreadable)
	}
	problems := strings.Join(f.Problems, "\n")
	for _, machine := range []string{hostfs.KernelOSRelease, hostfs.ProcModules, hostfs.PCIDevicesDir, hostfs.DMIDir, hostfs.SysBusDir, hostfs.ProcCmdline, "Live rules"} {
		if strings.Contains(problems, machine) {
			t.Errorf("an image is no machine, yet the problems name %s:\n%s", machine, problems)
		}
	}
	notes := strings.Join(f.NotInImage, "\n")
	for _, want := range []string{"Loaded modules (/proc/modules)", "The machine's hardware", "the device tree", "Live rules: an image has none", "The kernel command line"} {
		if !strings.Contains(notes, want) {
			t.Errorf("what an image cannot tell lacks %q:\n%s", want, notes)
		}
	}
}

// Several kernels: the newest is judged and the others named;
// --kernel-release judges another. A /lib/modules directory without its
// kernel (modules left by a removed package) is no kernel.
func TestProbeImageWithSeveralKernels(t *testing.T) {
	h := testhost.New(t).DebianCloudKernel().
		File("/boot/vmlinuz-6.1.0-9-cloud-amd64", "not a kernel image\n").
		File("/lib/modules/6.1.0-9-cloud-amd64/modules.dep", "kernel/net/ipv4/netfilter/ip_tables.ko:\n").
		File("/lib/modules/6.1.0-99-cloud-amd64/modules.dep", "kernel/net/netfilter/x_tables.ko:\n")
	f := Probe(h.Root(), Options{})
	if f.Kernel.Release != testhost.DebianCloudRelease {
		t.Errorf("judged %q, want the newest, %s", f.Kernel.Release, testhost.DebianCloudRelease)
	}
	if !slices.ContainsFunc(f.NotInImage, func(s string) bool {
		return strings.Contains(s, "it has 6.1.0-9-cloud-amd64 and "+testhost.DebianCloudRelease+"; the newest, "+testhost.DebianCloudRelease+", is judged here (--kernel-release judges another)")
	}) {
		t.Errorf("the choice is not said: %q", f.NotInImage)
	}
	f = Probe(h.Root(), Options{KernelRelease: "6.1.0-9-cloud-amd64"})
	if !f.Image || f.Kernel.Release != "6.1.0-9-cloud-amd64" || f.Kernel.ReleaseSource != "--kernel-release" || !HasModule(f.Modules.Available, "ip_tables") {
		t.Errorf("--kernel-release: image %v, %q from %q, modules %q", f.Image, f.Kernel.Release, f.Kernel.ReleaseSource, f.Modules.Available)
	}
}

// A root with neither a running nor an installed kernel is no image: its
// missing sources stay problems, as before.
func TestProbeRootWithoutKernelIsNoImage(t *testing.T) {
	f := Probe(testhost.New(t).File("/lib/modules/6.1.0-9-amd64/modules.dep", "").Root(), Options{})
	if f.Image || len(f.NotInImage) != 0 || !slices.ContainsFunc(f.Problems, func(s string) bool { return strings.Contains(s, "no kernel is installed under --root") }) {
		t.Errorf("image %v, not in image %q, problems %q", f.Image, f.NotInImage, f.Problems)
	}
}

// An arm64 NAS box boots from a device tree: its model and compatible
// names are read (for device-tree legacy triggers), and having no DMI is
// then no problem (issue 30 item 7).
func TestProbeDeviceTree(t *testing.T) {
	h := testhost.New(t).Kernel("6.1.0-57-cloud-arm64").DeviceTree("Synology DS418", "synology,ds418", "realtek,rtd1296")
	f := Probe(h.Root(), Options{})
	hw := f.Hardware
	if hw.DeviceTreeModel != "Synology DS418" || !slices.Equal(hw.DeviceTreeCompatible, []string{"synology,ds418", "realtek,rtd1296"}) {
		t.Errorf("device tree %q %q", hw.DeviceTreeModel, hw.DeviceTreeCompatible)
	}
	for _, p := range f.Problems {
		if strings.Contains(p, hostfs.DMIDir) {
			t.Errorf("a device-tree machine's missing DMI is reported: %s", p)
		}
	}
	// Without a device tree a missing DMI is still said.
	f = Probe(testhost.New(t).Kernel("6.1.0-57-cloud-amd64").Root(), Options{})
	if !slices.ContainsFunc(f.Problems, func(s string) bool { return strings.Contains(s, hostfs.DMIDir+" has no sys_vendor") }) {
		t.Errorf("no DMI and no device tree, yet no problem: %q", f.Problems)
	}
	// A property that is not text is refused, not half-read.
	bin := testhost.New(t).Kernel("6.1.0-57-cloud-arm64").File("/proc/device-tree/compatible", "\x00\x00\x01\x02")
	f = Probe(bin.Root(), Options{})
	if len(f.Hardware.DeviceTreeCompatible) != 0 || !slices.ContainsFunc(f.Unreadable, func(s string) bool {
		return strings.HasPrefix(s, hostfs.DeviceTreeCompatible+": byte 0 of entry 3 is not printable text")
	}) {
		t.Errorf("binary compatible: %q, unreadable %q", f.Hardware.DeviceTreeCompatible, f.Unreadable)
	}
}
