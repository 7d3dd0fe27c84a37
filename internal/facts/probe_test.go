package facts

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func TestProbeProfiles(t *testing.T) {
	type check func(t *testing.T, f Facts)
	cases := map[string]struct {
		build  func(*testhost.Host) *testhost.Host
		checks []check
	}{
		"synology": {(*testhost.Host).Synology44, []check{
			release("4.4.302+", 4, 4, 302),
			option("/proc/config.gz", map[string]Tristate{"NF_TABLES": Absent, "NFT_COMPAT": Absent, "IP_NF_IPTABLES": Module, "NETFILTER_XTABLES_LEGACY": Absent}),
			func(t *testing.T, f Facts) {
				if !f.Modules.LoadedKnown || !slices.Contains(f.Modules.Loaded, "iptable_nat") || slices.Contains(f.Modules.Loaded, "nf_tables") {
					t.Errorf("loaded modules %v", f.Modules)
				}
				if !slices.Contains(f.Hardware.PCI, PCIDevice{Address: "0000:01:00.0", Vendor: "1b4b", Device: "9235", Driver: "ahci"}) {
					t.Errorf("PCI %+v lacks the Marvell controller", f.Hardware.PCI)
				}
				if f.Hardware.DMIVendor != "Synology Inc." || f.Hardware.DMIProduct != "DS918+" {
					t.Errorf("DMI %q %q", f.Hardware.DMIVendor, f.Hardware.DMIProduct)
				}
				if !slices.Equal(f.Hardware.Drivers, []string{"ahci", "igb"}) {
					t.Errorf("drivers %q", f.Hardware.Drivers)
				}
				if !slices.Contains(f.Cmdline, "syno_hw_version=DS918+") {
					t.Errorf("cmdline %q", f.Cmdline)
				}
			},
			userspace("legacy", "/sbin/xtables-legacy-multi", []string{"filter", "nat"}, []string{"filter"}),
		}},
		"debian12": {(*testhost.Host).Debian12, []check{
			release("6.1.0-18-amd64", 6, 1, 0),
			option("/boot/config-6.1.0-18-amd64", map[string]Tristate{"NF_TABLES": Module, "NF_TABLES_INET": Builtin, "IP_NF_IPTABLES": Module, "NFT_COUNTER": Absent}),
			func(t *testing.T, f Facts) {
				m := f.Modules
				if !m.BuiltinKnown || !slices.Equal(m.Builtin, []string{"af_packet", "unix"}) || !m.AvailableKnown || !slices.Contains(m.Available, "nft_fib_ipv6") {
					t.Errorf("modules %+v", m)
				}
			},
			userspace("nft", "/usr/sbin/xtables-nft-multi", []string{}, []string{}),
		}},
		"rhel9": {(*testhost.Host).RHEL9, []check{
			release("5.14.0-427.13.1.el9_4.x86_64", 5, 14, 0),
			func(t *testing.T, f Facts) {
				if !f.Modules.AvailableKnown || !slices.Contains(f.Modules.Available, "ip_tables") {
					t.Errorf("modules through the /lib -> usr/lib link: %+v", f.Modules)
				}
			},
			userspace("nft", "/usr/sbin/xtables-nft-multi", []string{}, []string{}),
		}},
		"ubuntu-docker": {(*testhost.Host).Ubuntu2204DockerLegacy, []check{
			release("5.15.0-91-generic", 5, 15, 0),
			userspace("legacy", "/usr/sbin/xtables-legacy-multi", []string{"filter", "nat"}, []string{}),
		}},
		"alpine617": {(*testhost.Host).Alpine617, []check{
			release("6.17.3-0-lts", 6, 17, 3),
			option("/boot/config-6.17.3-0-lts", map[string]Tristate{"NETFILTER_XTABLES_LEGACY": Absent, "IP_NF_IPTABLES_LEGACY": Absent, "IP_NF_FILTER": Absent, "NFT_COMPAT": Module}),
			userspace("nft", "/sbin/xtables-nft-multi", []string{}, []string{}),
		}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			f := Probe(c.build(testhost.New(t)).Root(), Options{})
			if len(f.Unreadable) > 0 {
				t.Errorf("unreadable: %q", f.Unreadable)
			}
			for _, ch := range c.checks {
				ch(t, f)
			}
		})
	}
}

func release(r string, major, minor, patch int) func(*testing.T, Facts) {
	return func(t *testing.T, f Facts) {
		k := f.Kernel
		if k.Release != r || k.Major != major || k.Minor != minor || k.Patch != patch {
			t.Errorf("kernel %q %d.%d.%d, want %q", k.Release, k.Major, k.Minor, k.Patch, r)
		}
	}
}

func option(source string, want map[string]Tristate) func(*testing.T, Facts) {
	return func(t *testing.T, f Facts) {
		if f.Kernel.ConfigSource != source {
			t.Errorf("config source %q, want %q", f.Kernel.ConfigSource, source)
		}
		for o, v := range want {
			if f.Kernel.Config[o] != v {
				t.Errorf("%s = %q, want %q", o, f.Kernel.Config[o], v)
			}
		}
		if len(f.Kernel.Config) != len(KernelOptions) {
			t.Errorf("%d options recorded, want %d", len(f.Kernel.Config), len(KernelOptions))
		}
	}
}

func userspace(alt, path string, v4, v6 []string) func(*testing.T, Facts) {
	return func(t *testing.T, f Facts) {
		u := f.Userspace
		if u.IptablesAlternative != alt || u.IptablesPath != path || !slices.Equal(u.LegacyTablesIPv4, v4) || !slices.Equal(u.LegacyTablesIPv6, v6) {
			t.Errorf("userspace %+v, want %s %s %q %q", u, alt, path, v4, v6)
		}
	}
}

func TestProbeEmptyRoot(t *testing.T) {
	f := Probe(hostfs.New(t.TempDir()), Options{Live: notCalled(t)})
	if len(f.Unreadable) != 0 {
		t.Errorf("unreadable on an empty root: %q", f.Unreadable)
	}
	if f.Kernel.Release != "" || f.Kernel.ConfigSource != "" || f.Modules.LoadedKnown || f.Userspace.IptablesAlternative != "unknown" || f.LiveRules.Probed {
		t.Errorf("facts from nothing: %+v", f)
	}
	for _, o := range KernelOptions {
		if f.Kernel.Config[o] != Unknown {
			t.Errorf("%s = %q on an empty root", o, f.Kernel.Config[o])
		}
	}
	joined := strings.Join(f.Problems, "\n")
	for _, want := range []string{"/proc/sys/kernel/osrelease is missing", "No kernel config found", "/proc/modules is missing",
		"/sys/bus/pci/devices is missing", "No iptables command found", "No rke2-server.service", "/proc/cmdline is missing",
		"Live rules were not read", "No RKE2 runtime in /var/lib/rancher/rke2/data"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
}

func TestProbeCorruptSources(t *testing.T) {
	h := testhost.New(t).Debian12().
		File("/proc/config.gz", "this is not gzip").
		File("/lib/modules/6.1.0-18-amd64/modules.dep", "garbage without colon\n").
		File("/run/rke2-proxy-backend/plan.json", "{not json").
		RKE2Config("config.yaml.d/10-bad.yaml", "kube-proxy-arg: [proxy-mode=nftables\n")
	f := Probe(h.Root(), Options{})
	want := []string{
		"/proc/config.gz: not a gzip file (gzip: invalid header): the kernel config cannot be read; fix or remove the file, or set the backend explicitly",
		`/lib/modules/6.1.0-18-amd64/modules.dep: line 1 does not name a module: loadable modules are unknown; fix or remove the file (depmod rebuilds modules.dep)`,
		"RKE2 config /etc/rancher/rke2/config.yaml.d/10-bad.yaml: invalid YAML: yaml: line 1: did not find expected ',' or ']': RKE2's config cannot be read, and RKE2 will refuse it too; fix the file",
		"/run/rke2-proxy-backend/plan.json: not valid JSON at byte 2: the backend applied earlier in this boot is unknown; remove the file, apply writes it again",
	}
	if !slices.Equal(f.Unreadable, want) {
		t.Errorf("unreadable:\n%s\nwant:\n%s", strings.Join(f.Unreadable, "\n"), strings.Join(want, "\n"))
	}
	// A broken first candidate does not hide a good later one.
	if f.Kernel.ConfigSource != "/boot/config-6.1.0-18-amd64" || f.Kernel.Config["NF_TABLES"] != Module {
		t.Errorf("config from %q: %v", f.Kernel.ConfigSource, f.Kernel.Config["NF_TABLES"])
	}
	if f.Modules.AvailableKnown || f.PreviousPlan != "" {
		t.Errorf("broken sources produced facts: %+v %q", f.Modules, f.PreviousPlan)
	}
}

func TestProbeOSReleaseGarbage(t *testing.T) {
	f := Probe(testhost.New(t).File("/proc/sys/kernel/osrelease", "\x00\x01\n").Root(), Options{})
	if len(f.Unreadable) != 1 || !strings.HasPrefix(f.Unreadable[0], "/proc/sys/kernel/osrelease: holds a NUL byte at offset 0") {
		t.Errorf("unreadable %q", f.Unreadable)
	}
}

func TestProbeContainerCmdline(t *testing.T) {
	h := testhost.New(t).Cmdline("host=words not=ours").
		Container("/usr/lib/systemd/systemd", "--system", "rke2.proxy_backend=iptables-nft", "systemd.unit=multi-user.target")
	f := Probe(h.Root(), Options{})
	if want := []string{"rke2.proxy_backend=iptables-nft", "systemd.unit=multi-user.target"}; !slices.Equal(f.Cmdline, want) {
		t.Errorf("cmdline %q, want %q", f.Cmdline, want)
	}
	// container= in PID 1's environment is enough, too.
	h2 := testhost.New(t).File("/proc/1/environ", "PATH=/bin\x00container=podman\x00").File("/proc/1/cmdline", "/sbin/init\x00a=b\x00")
	if f := Probe(h2.Root(), Options{}); !slices.Equal(f.Cmdline, []string{"a=b"}) {
		t.Errorf("cmdline %q", f.Cmdline)
	}
}

// TestProbeRealHost runs the probe against this machine's own root: it
// must not panic and must read the running kernel's release.
func TestProbeRealHost(t *testing.T) {
	want, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		testhost.Unmet(t, "no /proc here: %v", err)
	}
	f := Probe(hostfs.New("/"), Options{})
	if f.Kernel.Release != strings.TrimSpace(string(want)) {
		t.Errorf("release %q, want %q", f.Kernel.Release, want)
	}
	t.Logf("problems: %q\nunreadable: %q", f.Problems, f.Unreadable)
}

func TestProbePresentButUnreadable(t *testing.T) {
	h := testhost.New(t).Kernel("6.1.0-18-amd64").
		Mkdir("/proc/modules").
		Mkdir("/etc/systemd/system/rke2-server.service").
		RKE2Unit("tarball", "server")
	f := Probe(h.Root(), Options{})
	want := []string{
		"/proc/modules: is a directory: loaded modules are unknown; replace it with the right file or remove it",
		"/etc/systemd/system/rke2-server.service: is a directory: this RKE2 unit's binary and config file are unknown; replace it with the right file or remove it",
	}
	if !slices.Equal(f.Unreadable, want) {
		t.Errorf("unreadable:\n%s", strings.Join(f.Unreadable, "\n"))
	}
	// The broken unit in /etc shadows the good one below it, as in systemd.
	if len(f.RKE2.Units) != 0 || f.Modules.LoadedKnown {
		t.Errorf("units %+v, modules %+v", f.RKE2.Units, f.Modules)
	}
}

// notCalled is the live reader of a probe under a root that is not the
// running host's (a fixture, an image): its kernel is another's, so the
// probe must not call it.
func notCalled(t *testing.T) LiveReader {
	return func([]string, []string) (LiveRules, []string) {
		t.Error("live rules read under a root that is not the running host's")
		return LiveRules{}, nil
	}
}
