package decide

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The decision sees the module tree (issue 30, CONTRACT point 1), on
// Debian 12's real cloud kernel: a module the config builds (=m) counts
// only when its file is in modules.dep (or it is loaded or built in).
// Module files deleted from the tree are the NAS or minimal image whose
// config still says m, and the Ubuntu or EL node without its
// extra-modules package.
func TestModuleTree(t *testing.T) {
	r := testhost.DebianCloudRelease
	dep := "/lib/modules/" + r + "/modules.dep"
	cfgFile := "/boot/config-" + r
	refusedBy := func(who string) func(*testhost.Host) {
		return func(h *testhost.Host) { h.File(hostfs.ConfigFile, "backend: "+who+"\n") }
	}
	cases := []struct {
		name    string
		host    func(*testhost.Host)
		backend backend.Backend
		reasons []string
		// not lists the backends the kernel cannot run, each with a
		// part of its reason.
		not     map[backend.Backend]string
		refused int
	}{
		{name: "the stock kernel runs all three", host: func(*testhost.Host) {}, backend: backend.IptablesNFT,
			reasons: []string{"The kernel can run both iptables-legacy and iptables-nft (per " + cfgFile + ")."}},
		{name: "nf_tables.ko deleted: legacy, said with the module and where it was looked for",
			host: func(h *testhost.Host) { h.DeleteModules("nf_tables") }, backend: backend.IptablesLegacy,
			reasons: []string{"The kernel has no nf_tables module: CONFIG_NF_TABLES=m in " + cfgFile + ", but " + dep +
				" does not list it (the module file is not installed; the package that usually ships it on Debian is linux-image-" + r + "), so only iptables-legacy can work."},
			not: map[backend.Backend]string{backend.IptablesNFT: "no nf_tables module", backend.NFTables: "no nf_tables module"}},
		{name: "nft_compat.ko deleted, but loaded: the running kernel has it",
			host: func(h *testhost.Host) {
				h.DeleteModules("nft_compat").LoadedModules("nft_compat", "ip_tables", "x_tables")
			}, backend: backend.IptablesNFT},
		{name: "an explicit iptables-nft the kernel cannot run is refused naming the module",
			host: func(h *testhost.Host) { h.DeleteModules("nf_tables"); refusedBy("iptables-nft")(h) }, backend: backend.IptablesLegacy, refused: 1,
			reasons: []string{"The override backend: iptables-nft in " + hostfs.ConfigFile + " asks for iptables-nft, but the kernel has no nf_tables module: CONFIG_NF_TABLES=m"},
			not:     map[backend.Backend]string{backend.IptablesNFT: "no nf_tables module", backend.NFTables: "no nf_tables module"}},
		{name: "no legacy modules (RHEL 10, kernels without legacy xtables): never legacy",
			host: func(h *testhost.Host) {
				h.DeleteModules("ip_tables", "iptable_filter", "iptable_nat", "iptable_mangle").LoadedModules("virtio_blk")
				refusedBy("iptables-legacy")(h)
			}, backend: backend.IptablesNFT, refused: 1,
			reasons: []string{"asks for iptables-legacy, but the kernel has no ip_tables module: CONFIG_IP_NF_IPTABLES=m in " + cfgFile + ", but " + dep + " does not list it"},
			not:     map[backend.Backend]string{backend.IptablesLegacy: "no ip_tables module"}},
		{name: "no iptable_nat: kube-proxy's nat rules have no table", host: func(h *testhost.Host) { h.DeleteModules("iptable_nat") },
			backend: backend.IptablesNFT, not: map[backend.Backend]string{backend.IptablesLegacy: "the kernel has no iptable_nat module: CONFIG_IP_NF_NAT=m"}},
		{name: "no nft_compat (EL 10 without kernel-modules-extra)", host: func(h *testhost.Host) { h.DeleteModules("nft_compat") },
			backend: backend.IptablesLegacy, not: map[backend.Backend]string{backend.IptablesNFT: "the kernel has no nft_compat module: CONFIG_NFT_COMPAT=m"}},
		{name: "no nft_chain_nat", host: func(h *testhost.Host) { h.DeleteModules("nft_chain_nat") },
			backend: backend.IptablesLegacy, not: map[backend.Backend]string{
				backend.IptablesNFT: "the kernel has no nft_chain_nat module: CONFIG_NFT_NAT=m",
				backend.NFTables:    "the kernel has no nft_chain_nat module"}},
		{name: "no nft_ct: nftables mode's expressions count too", host: func(h *testhost.Host) { h.DeleteModules("nft_ct") },
			backend: backend.IptablesNFT, not: map[backend.Backend]string{backend.NFTables: "the kernel has no nft_ct module: CONFIG_NFT_CT=m"}},
		{name: "no module tree: the config alone cannot confirm", host: func(h *testhost.Host) { h.Remove(dep) },
			backend: backend.IptablesNFT,
			reasons: []string{"Support for iptables-nft is assumed, not confirmed: CONFIG_NF_TABLES=m in " + cfgFile + " says nf_tables is a module, but " + dep + " could not be read, so whether its file is installed is not confirmed."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).DebianCloudNode().RKE2v134()
			c.host(h)
			f, cfg := probed(t, h, facts.Options{}, nil)
			d := Decide(f, cfg)
			if d.Backend != c.backend || len(d.Refused) != c.refused {
				t.Errorf("decided %s with refusals %q, want %s with %d", d.Backend, d.Refused, c.backend, c.refused)
			}
			for _, want := range c.reasons {
				if !slices.ContainsFunc(d.Reasons, func(r string) bool { return strings.Contains(r, want) }) {
					t.Errorf("no reason contains %q; reasons:\n  %s", want, strings.Join(d.Reasons, "\n  "))
				}
			}
			_, not := Runnable(f)
			for _, b := range backend.All {
				want, cannot := c.not[b]
				if got := not[b]; cannot != (got != "") || !strings.Contains(got, want) {
					t.Errorf("%s: not runnable because %q, want %q", b, got, want)
				}
			}
		})
	}
}

// nft_counter has been part of nf_tables.ko since it lost its own config
// option (Debian's 6.1 has neither), so apply must not ask modprobe for it
// and list it as missing on every healthy node (issue 30 item 5). A kernel
// whose config still builds it as a module keeps it.
func TestPreloadsLeaveFoldedModulesOut(t *testing.T) {
	f, c := probed(t, testhost.New(t).DebianCloudNode(), facts.Options{}, nil)
	mods := Decide(f, c).Modules
	if slices.Contains(mods, "nft_counter") || !slices.Contains(mods, "nf_tables") || !slices.Contains(mods, "nft_chain_nat") {
		t.Errorf("Debian 12's cloud kernel: modules %q, want nf_tables and nft_chain_nat without nft_counter", mods)
	}

	older := testhost.New(t).DebianCloudNode().File("/boot/config-"+testhost.DebianCloudRelease,
		testhost.ConfigText(map[string]string{"NF_TABLES": "m", "NFT_COMPAT": "m", "NFT_COUNTER": "m", "NFT_NAT": "m"}))
	f, c = probed(t, older, facts.Options{}, nil)
	if mods := preloads(backend.IptablesNFT, f); !slices.Contains(mods, "nft_counter") {
		t.Errorf("CONFIG_NFT_COUNTER=m without its file: modules %q, want nft_counter kept (it is missing)", mods)
	}
	f.Modules.AvailableKnown = false
	if mods := preloads(backend.IptablesNFT, f); !slices.Equal(mods, backend.IptablesNFT.Modules()) {
		t.Errorf("no module tree: modules %q, want every one of iptables-nft's", mods)
	}
}

// A backend the operator pinned in RKE2's config that the kernel cannot
// run is refused like an override (CONTRACT point 2): auto decides, and
// the drop-in's IPTABLES_MODE, read later, goes over the pin; the
// proxy-mode=iptables pin beside it stays. A pin the kernel can run but
// RKE2 does not document is still kept with a warning.
func TestRKE2PinTheKernelCannotRunIsRefused(t *testing.T) {
	r := testhost.DebianCloudRelease
	h := testhost.New(t).DebianCloudNode().RKE2v134().PinnedIptablesMode("nft").DeleteModules("nf_tables")
	f, c := probed(t, h, facts.Options{}, nil)
	d := Decide(f, c)
	check(t, d, want{backend: backend.IptablesLegacy, source: "auto", env: []string{"IPTABLES_MODE=legacy"}, refused: 1,
		respected: []string{"proxy-mode=iptables in " + hostfs.RKE2ConfigFile},
		reasons: []string{"RKE2's config sets proxy-mode=iptables in " + hostfs.RKE2ConfigFile + " and IPTABLES_MODE=nft in " + hostfs.RKE2ConfigFile +
			", which asks for iptables-nft, but the kernel has no nf_tables module: CONFIG_NF_TABLES=m in /boot/config-" + r}})
	if len(d.Refused) == 1 && !strings.HasPrefix(d.Refused[0], "proxy-mode=iptables in "+hostfs.RKE2ConfigFile+" and IPTABLES_MODE=nft in "+hostfs.RKE2ConfigFile+": the kernel has no nf_tables module") {
		t.Errorf("refused %q", d.Refused)
	}

	kept := testhost.New(t).DebianCloudNode().RKE2v130().PinnedProxyMode("nftables")
	f, c = probed(t, kept, facts.Options{}, nil)
	if d := Decide(f, c); d.Backend != backend.NFTables || len(d.Refused) != 0 {
		t.Errorf("nftables pinned on RKE2 v1.30 (the kernel runs it): %s, refused %q, want it kept", d.Backend, d.Refused)
	}
}

// arm64 NAS boxes boot from a device tree, where DMI triggers can never
// match: device_tree globs match its model and each compatible name
// (issue 30 item 7). QEMU's arm64 virt board is what the VM tier boots.
func TestDeviceTreeTrigger(t *testing.T) {
	for _, c := range []struct {
		name, model, glob, reason string
		compatible                []string
	}{
		{"QEMU's virt board by its model", "linux,dummy-virt", "linux,dummy-virt",
			`The legacy trigger device tree model "linux,dummy-virt" matches legacy_triggers.device_tree "linux,dummy-virt", so iptables-legacy is used.`, []string{"linux,dummy-virt"}},
		{"a DiskStation by a compatible glob", "Synology DiskStation DS418", "synology,*",
			`The legacy trigger device tree compatible "synology,ds418" matches legacy_triggers.device_tree "synology,*", so iptables-legacy is used.`, []string{"synology,ds418", "realtek,rtd1296"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).DebianCloudNode().Remove("/sys/class/dmi").DeviceTree(c.model, c.compatible...).
				File(hostfs.ConfigFile, "legacy_triggers:\n  device_tree: [\""+c.glob+"\"]\n")
			f, cfg := probed(t, h, facts.Options{}, nil)
			check(t, Decide(f, cfg), autoIptables(backend.IptablesLegacy, c.reason))
		})
	}
	h := testhost.New(t).DebianCloudNode().Remove("/sys/class/dmi").DeviceTree("linux,dummy-virt", "linux,dummy-virt").
		File(hostfs.ConfigFile, "legacy_triggers:\n  device_tree: [\"synology,*\"]\n")
	f, cfg := probed(t, h, facts.Options{}, nil)
	if d := Decide(f, cfg); d.Backend != backend.IptablesNFT {
		t.Errorf("a glob that matches nothing moved the node to %s: %q", d.Backend, d.Reasons)
	}
}

// detect --root on a node image predicts the backend its first boot picks:
// the image's own kernel and module tree decide.
func TestImageRootPredictsTheBoot(t *testing.T) {
	for _, c := range []struct {
		name, alternative string
		delete            []string
		want              backend.Backend
	}{
		{"stock image", "nft", nil, backend.IptablesNFT},
		{"image without nf_tables.ko", "nft", []string{"nf_tables"}, backend.IptablesLegacy},
		{"image without the legacy tables", "legacy", []string{"ip_tables", "iptable_filter", "iptable_nat", "iptable_mangle"}, backend.IptablesNFT},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testhost.New(t).DebianCloudKernel().IptablesAlternative(c.alternative).RKE2v134()
			if len(c.delete) > 0 {
				h.DeleteModules(c.delete...)
			}
			f, cfg := probed(t, h, facts.Options{}, nil)
			if d := Decide(f, cfg); !f.Image || d.Backend != c.want {
				t.Errorf("image %v: decided %s, want %s; reasons %q", f.Image, d.Backend, c.want, d.Reasons)
			}
		})
	}
}
