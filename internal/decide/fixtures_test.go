package decide

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// Facts built by hand, as the probe would report these hosts; the
// probe-driven twins of these tests are in profiles_test.go.

func kernel(release string, major, minor int, src string, opts map[string]facts.Tristate) facts.Kernel {
	return facts.Kernel{Release: release, Major: major, Minor: minor, ConfigSource: src, Config: opts}
}

func modernOpts() map[string]facts.Tristate {
	return map[string]facts.Tristate{
		"NF_TABLES": "m", "NFT_COMPAT": "m", "NFT_CT": "m", "NFT_NAT": "m", "NFT_MASQ": "m",
		"NFT_NUMGEN": "m", "NFT_FIB_IPV4": "m", "NFT_REJECT": "m",
		"IP_NF_IPTABLES": "m", "NETFILTER_XTABLES_LEGACY": "n", "IP_NF_IPTABLES_LEGACY": "n",
	}
}

func synology() facts.Facts {
	return facts.Facts{
		Kernel: kernel("4.4.302+", 4, 4, "/proc/config.gz", map[string]facts.Tristate{
			"NF_TABLES": "n", "NFT_COMPAT": "n", "IP_NF_IPTABLES": "m", "NETFILTER_XTABLES_LEGACY": "n", "IP_NF_IPTABLES_LEGACY": "n",
		}),
		Modules:   facts.Modules{Loaded: []string{"ip_tables", "x_tables", "ahci"}, LoadedKnown: true},
		Hardware:  facts.Hardware{PCI: []facts.PCIDevice{{Address: "0000:01:00.0", Vendor: "1b4b", Device: "9235", Driver: "ahci"}}, DMIVendor: "Synology Inc.", DMIProduct: "DS918+", Drivers: []string{"ahci", "igb"}},
		Userspace: facts.Userspace{IptablesAlternative: "legacy", LegacyTablesIPv4: []string{"filter", "nat"}},
	}
}

func debian12() facts.Facts {
	return facts.Facts{
		Kernel:    kernel("6.1.0-18-amd64", 6, 1, "/boot/config-6.1.0-18-amd64", modernOpts()),
		Modules:   facts.Modules{Loaded: []string{"nf_tables", "nft_compat"}, LoadedKnown: true, Available: testhost.DebianCloudModules(), AvailableKnown: true, BuiltinKnown: true},
		Userspace: facts.Userspace{IptablesAlternative: "nft", IptablesPath: "/usr/sbin/iptables"},
	}
}

func rhel9() facts.Facts {
	f := debian12()
	f.Kernel = kernel("5.14.0-427.13.1.el9_4.x86_64", 5, 14, "/boot/config-5.14.0-427.13.1.el9_4.x86_64", modernOpts())
	return f
}

func ubuntuDockerLegacy() facts.Facts {
	f := debian12()
	f.Kernel = kernel("5.15.0-91-generic", 5, 15, "/boot/config-5.15.0-91-generic", modernOpts())
	f.Userspace = facts.Userspace{IptablesAlternative: "legacy", IptablesPath: "/usr/sbin/iptables", LegacyTablesIPv4: []string{"filter", "nat"}}
	return f
}

func alpine617() facts.Facts {
	opts := modernOpts()
	opts["IP_NF_IPTABLES"] = "m"
	return facts.Facts{
		Kernel:    kernel("6.17.3-0-lts", 6, 17, "/boot/config-6.17.3-0-lts", opts),
		Modules:   facts.Modules{Loaded: []string{"nf_tables", "nft_compat"}, LoadedKnown: true, Available: withoutLegacyTables(testhost.DebianCloudModules()), AvailableKnown: true, BuiltinKnown: true},
		Userspace: facts.Userspace{IptablesAlternative: "nft"},
	}
}

// withoutLegacyTables is a module tree without the legacy tables' modules,
// as a kernel built without legacy xtables has it.
func withoutLegacyTables(mods []string) []string {
	return slices.DeleteFunc(mods, func(m string) bool {
		return m == "ip_tables" || m == "ip6_tables" || strings.HasPrefix(m, "iptable_") || strings.HasPrefix(m, "ip6table_") ||
			strings.HasPrefix(m, "ipt_") || strings.HasPrefix(m, "ip6t_")
	})
}

func withRKE2(f facts.Facts, version string, files ...rke2.File) facts.Facts {
	v, err := rke2.ParseVersion(version)
	if err != nil {
		panic(err)
	}
	f.RKE2.Version, f.RKE2.Kubernetes, f.RKE2.ConfigFile = version, v, hostfs.RKE2ConfigFile
	f.RKE2.Config = rke2.Merge(files)
	return f
}

func rke2File(name string, values map[string]any) rke2.File {
	return rke2.File{Path: name, Values: values}
}

// operatorFile is the operator's own RKE2 config file with values.
func operatorFile(values map[string]any) rke2.File { return rke2File(hostfs.RKE2ConfigFile, values) }

// dropInFile is our drop-in beside the operator's RKE2 config, with values.
func dropInFile(values map[string]any) rke2.File {
	return rke2File(rke2.DropInPath(hostfs.RKE2ConfigFile), values)
}

func cfg(mut func(*config.Config)) config.Config {
	c := config.Defaults()
	if mut != nil {
		mut(&c)
	}
	return c
}

type want struct {
	backend   backend.Backend
	source    string
	args      []string
	env       []string
	disabled  bool
	reasons   []string // each must be a substring of some reason
	refused   int
	respected []string
	// moreModules follow the backend's own (ipvs mode's preload).
	moreModules []string
	// treeUnknown: no module tree was read, so every module of the
	// backend is asked for, nft_counter too.
	treeUnknown bool
}

// autoIptables is the automatic choice of iptables backend b as RKE2
// passes it on: proxy-mode=iptables and IPTABLES_MODE legacy or nft, with
// reasons that must appear.
func autoIptables(b backend.Backend, reasons ...string) want {
	mode := map[backend.Backend]string{backend.IptablesLegacy: "legacy", backend.IptablesNFT: "nft"}[b]
	return want{backend: b, source: "auto", args: []string{"proxy-mode=iptables"}, env: []string{"IPTABLES_MODE=" + mode}, reasons: reasons}
}

// refusing is w after one override was refused.
func (w want) refusing() want {
	w.refused = 1
	return w
}

func check(t *testing.T, d Decision, w want) {
	t.Helper()
	if d.Backend != w.backend || d.Source != w.source || d.Disabled != w.disabled {
		t.Errorf("decision %q from %q (disabled %v), want %q from %q (disabled %v)\nreasons: %q", d.Backend, d.Source, d.Disabled, w.backend, w.source, w.disabled, d.Reasons)
	}
	if w.args == nil {
		w.args = []string{}
	}
	if w.env == nil {
		w.env = []string{}
	}
	if !w.disabled {
		if !reflect.DeepEqual(d.KubeProxyArgs, w.args) {
			t.Errorf("args %q, want %q", d.KubeProxyArgs, w.args)
		}
		if !reflect.DeepEqual(d.KubeProxyEnv, w.env) {
			t.Errorf("env %q, want %q", d.KubeProxyEnv, w.env)
		}
		want := modernPreloads(w.backend)
		if w.treeUnknown {
			want = w.backend.Modules()
		}
		if want = append(want, w.moreModules...); !reflect.DeepEqual(d.Modules, want) {
			t.Errorf("modules %q, want %q", d.Modules, want)
		}
	}
	for _, r := range w.reasons {
		found := false
		for _, got := range d.Reasons {
			if strings.Contains(got, r) {
				found = true
			}
		}
		if !found {
			t.Errorf("no reason contains %q; reasons:\n  %s", r, strings.Join(d.Reasons, "\n  "))
		}
	}
	if len(d.Refused) != w.refused {
		t.Errorf("refused %q, want %d", d.Refused, w.refused)
	}
	if !reflect.DeepEqual(d.Respected, w.respected) {
		t.Errorf("respected %q, want %q", d.Respected, w.respected)
	}
	for _, r := range d.Reasons {
		if r == "" || !strings.HasSuffix(r, ".") || strings.ToUpper(r[:1]) != r[:1] {
			t.Errorf("reason %q is not a sentence", r)
		}
	}
}

// modernPreloads is what apply loads for b on the kernels of these
// fixtures (6.x-like: no CONFIG_NFT_COUNTER, no nft_counter.ko): b's
// modules without nft_counter, which is part of nf_tables.ko there.
func modernPreloads(b backend.Backend) []string {
	return slices.DeleteFunc(b.Modules(), func(m string) bool { return m == "nft_counter" })
}

func debian12WithMarvell() facts.Facts {
	f := debian12()
	f.Hardware = facts.Hardware{
		PCI:       []facts.PCIDevice{{Address: "0000:01:00.0", Vendor: "1b4b", Device: "9235", Driver: "mv-sata"}},
		DMIVendor: "Synology Inc.", DMIProduct: "DS1621+",
	}
	return f
}
