package testhost

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"sort"
	"strings"
)

// Kernel sets the running kernel's release (/proc/sys/kernel/osrelease).
func (h *Host) Kernel(release string) *Host {
	h.t.Helper()
	h.release = release
	return h.File("/proc/sys/kernel/osrelease", release+"\n")
}

// ConfigText renders kernel options (names without CONFIG_, values y, m, n
// or a literal) as a kernel .config: sorted, "n" as "# CONFIG_X is not set".
func ConfigText(opts map[string]string) string {
	names := make([]string, 0, len(opts))
	for n := range opts {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("#\n# Automatically generated file; DO NOT EDIT.\n# Linux Kernel Configuration\n#\n")
	for _, n := range names {
		if opts[n] == "n" {
			fmt.Fprintf(&b, "# CONFIG_%s is not set\n", n)
		} else {
			fmt.Fprintf(&b, "CONFIG_%s=%s\n", n, opts[n])
		}
	}
	return b.String()
}

// KernelConfig writes opts as /proc/config.gz (gzip, like CONFIG_IKCONFIG_PROC).
func (h *Host) KernelConfig(opts map[string]string) *Host {
	h.t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(ConfigText(opts))); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	if err := zw.Close(); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return h.write("/proc/config.gz", buf.Bytes())
}

// BootConfig writes opts as /boot/config-<release>, where distributions
// without /proc/config.gz (Debian, Ubuntu, RHEL) keep it.
func (h *Host) BootConfig(opts map[string]string) *Host {
	h.t.Helper()
	h.needRelease("BootConfig")
	return h.File("/boot/config-"+h.release, ConfigText(opts))
}

// LoadedModules writes /proc/modules with names loaded (none is an empty
// but present file: a kernel with module support and nothing loaded).
func (h *Host) LoadedModules(names ...string) *Host {
	h.t.Helper()
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s 16384 0 - Live 0x0000000000000000\n", n)
	}
	return h.File("/proc/modules", b.String())
}

// BuiltinModules writes /lib/modules/<release>/modules.builtin.
func (h *Host) BuiltinModules(names ...string) *Host {
	h.t.Helper()
	return h.moduleList("BuiltinModules", "modules.builtin", "%s.ko\n", names)
}

// AvailableModules writes /lib/modules/<release>/modules.dep listing
// names as compressed (.ko.xz) modules, the way current distributions ship them.
func (h *Host) AvailableModules(names ...string) *Host {
	h.t.Helper()
	return h.moduleList("AvailableModules", "modules.dep", "%s.ko.xz:\n", names)
}

// moduleList writes /lib/modules/<release>/file with one line per name,
// line formatted from the module's in-tree path.
func (h *Host) moduleList(caller, file, line string, names []string) *Host {
	h.t.Helper()
	h.needRelease(caller)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, line, modulePath(n))
	}
	return h.File("/lib/modules/"+h.release+"/"+file, b.String())
}

// modulePath is a plausible in-tree path for a module name.
func modulePath(name string) string {
	switch {
	case strings.HasPrefix(name, "ip6"):
		return "kernel/net/ipv6/netfilter/" + name
	case strings.HasPrefix(name, "ip") || strings.HasPrefix(name, "nft_fib_ipv4"):
		return "kernel/net/ipv4/netfilter/" + name
	case strings.HasPrefix(name, "nf") || strings.HasPrefix(name, "xt_") || name == "x_tables":
		return "kernel/net/netfilter/" + name
	}
	return "kernel/drivers/misc/" + name
}
