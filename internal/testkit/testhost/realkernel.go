package testhost

import (
	"embed"
	"os"
	"path"
	"slices"
	"strings"
)

// kernels holds real kernels' files, cut to what the probe reads (see
// kernels/README.md for where each came from).
//
//go:embed kernels/6.1.0-57-cloud-amd64
var kernels embed.FS

// DebianCloudRelease is the kernel issue 30 booted: Debian 12's
// linux-image-6.1.0-57-cloud-amd64.
const DebianCloudRelease = "6.1.0-57-cloud-amd64"

// DebianCloudKernel installs Debian 12's cloud kernel as its package does:
// /boot/config-<release>, /boot/vmlinuz-<release> (a placeholder) and
// /lib/modules/<release>/modules.dep and modules.builtin, from the real
// package (netfilter's part). It writes nothing under /proc, so alone it
// is an image root; Kernel(DebianCloudRelease) makes it the running kernel.
func (h *Host) DebianCloudKernel() *Host {
	h.t.Helper()
	r := DebianCloudRelease
	h.release = r
	h.File("/boot/config-"+r, h.kernelFile(r, "config"))
	h.File("/boot/vmlinuz-"+r, "not a kernel image: a fixture\n")
	h.File("/lib/modules/"+r+"/modules.builtin", h.kernelFile(r, "modules.builtin"))
	return h.File("/lib/modules/"+r+"/modules.dep", h.kernelFile(r, "modules.dep"))
}

// DebianCloudNode is a Debian 12 VM running DebianCloudKernel under QEMU
// as issue 30 booted it: what systemd loaded by the time a generator runs
// (ip_tables among them: Debian's systemd loads it at every boot), the nft
// iptables alternative, QEMU's DMI and a virtio disk.
func (h *Host) DebianCloudNode() *Host {
	h.t.Helper()
	h.DebianCloudKernel().Kernel(DebianCloudRelease)
	h.LoadedModules("ip_tables", "x_tables", "virtio_blk", "virtio_net", "virtio_pci", "ext4")
	h.LegacyTables([]string{}, nil)
	h.IptablesAlternative("nft")
	h.PCI("0000:00:04.0", "1af4", "1001", "virtio-pci")
	h.DMI("QEMU", "Standard PC (i440FX + PIIX, 1996)")
	return h.Cmdline("root=/dev/vda rw console=ttyS0")
}

// DebianCloudModules are the module names in the real package's
// modules.dep excerpt, for facts built by hand.
func DebianCloudModules() []string {
	data, err := kernels.ReadFile(path.Join("kernels", DebianCloudRelease, "modules.dep"))
	if err != nil {
		panic(err)
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		file, _, found := strings.Cut(line, ":")
		if found {
			names = append(names, strings.TrimSuffix(path.Base(file), ".ko"))
		}
	}
	return names
}

// DeleteModules removes the named modules from the module tree as
// deleting their files and running depmod -a would: the NAS or minimal
// image whose config still says m (Ubuntu's linux-modules-extra or EL's
// kernel-modules-extra not installed). Modules that needed them go too.
func (h *Host) DeleteModules(names ...string) *Host {
	h.t.Helper()
	h.needRelease("DeleteModules")
	dep := "/lib/modules/" + h.release + "/modules.dep"
	gone := func(file string) bool {
		return slices.Contains(names, strings.TrimSuffix(path.Base(file), ".ko"))
	}
	var kept []string
	for _, line := range strings.Split(strings.TrimSuffix(h.readFile(dep), "\n"), "\n") {
		file, deps, _ := strings.Cut(line, ":")
		if gone(file) || slices.ContainsFunc(strings.Fields(deps), gone) {
			continue
		}
		kept = append(kept, line)
	}
	return h.File(dep, strings.Join(kept, "\n")+"\n")
}

func (h *Host) kernelFile(release, name string) string {
	h.t.Helper()
	data, err := kernels.ReadFile(path.Join("kernels", release, name))
	if err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return string(data)
}

// readFile is a host file's content; the test fails when it cannot be read.
func (h *Host) readFile(hostPath string) string {
	h.t.Helper()
	data, err := os.ReadFile(h.path(hostPath))
	if err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return string(data)
}
