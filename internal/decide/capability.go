package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// support is what the facts say about one backend on this host.
type support int

const (
	supported   support = iota // the facts show everything it needs
	unconfirmed                // nothing says it cannot work, but not everything was readable
	unsupported                // a fact shows it cannot work
)

// capability is a backend's support with the sentence that explains it.
type capability struct {
	support support
	// why is a clause such as "the kernel has no nf_tables (CONFIG_NF_TABLES
	// is not set in /proc/config.gz)"; set for unsupported and unconfirmed.
	why string
	// onlyLists: the verdict rests on no kernel config, only on module
	// lists missing the module (names move between kernels).
	onlyLists bool
	// kernel: unsupported because of the kernel (a missing feature, too
	// old a release, a trial load it rejected), not of RKE2, the CNI or
	// userspace. An operator's pin is refused only then (CONTRACT point 2).
	kernel bool
}

// nftablesModeOptions are nf_tables expressions kube-proxy's nftables mode
// uses beyond nf_tables itself (DOMAIN.md section 4). Only the kernel
// config counts against them (every option not set, or set to m with the
// module's file missing from the tree): module names move between kernel
// versions, so module lists alone prove nothing.
var nftablesModeOptions = []backend.Requirement{
	{Feature: "nft_ct", Options: []string{"NFT_CT"}, Modules: []string{"nft_ct"}},
	{Feature: "nft_nat", Options: []string{"NFT_NAT"}, Modules: []string{"nft_nat"}},
	{Feature: "nft_masq", Options: []string{"NFT_MASQ"}, Modules: []string{"nft_masq"}},
	{Feature: "nft_numgen", Options: []string{"NFT_NUMGEN"}, Modules: []string{"nft_numgen"}},
	{Feature: "nft_fib_ipv4", Options: []string{"NFT_FIB_IPV4"}, Modules: []string{"nft_fib_ipv4"}},
	{Feature: "nft_reject", Options: []string{"NFT_REJECT"}, Modules: []string{"nft_reject"}},
}

// kernelView answers "does the kernel have feature X" from everything the
// probe read, and words the evidence.
type kernelView struct {
	k facts.Kernel
	m facts.Modules
}

// nothingKnown is true when neither a kernel config nor any module list
// could be read: every backend is then unconfirmed.
func (v kernelView) nothingKnown() bool {
	return v.k.ConfigSource == "" && !v.m.LoadedKnown && !v.m.BuiltinKnown && !v.m.AvailableKnown
}

func (v kernelView) atLeast(major, minor int) bool {
	return v.k.Major > major || (v.k.Major == major && v.k.Minor >= minor)
}

// feature judges one requirement (CONTRACT point 1). It is there when one
// of its modules is loaded, built in or in the module tree, or one of its
// options is y. An option set to m promises a module file: when the module
// tree was read and has none, the feature is missing, however the config
// reads; when the tree is unknown, the config alone cannot confirm it.
// Without either: every option not set, or (no config at all) every
// module list read and none naming it, means missing.
func (v kernelView) feature(req backend.Requirement) capability {
	for _, mod := range req.Modules {
		if facts.HasModule(v.m.Loaded, mod) || facts.HasModule(v.m.Builtin, mod) || facts.HasModule(v.m.Available, mod) {
			return capability{support: supported}
		}
	}
	var asModule []string
	for _, opt := range req.Options {
		switch v.k.Config[opt] {
		case facts.Builtin:
			return capability{support: supported}
		case facts.Module:
			asModule = append(asModule, opt)
		}
	}
	if len(asModule) > 0 {
		return v.moduleFile(req, asModule)
	}
	if len(req.Options) > 0 && allAbsent(v.k, req.Options) {
		return capability{support: unsupported, kernel: true, why: fmt.Sprintf("the kernel has no %s (%s in %s)", req.Feature, notSetText(req.Options), v.k.ConfigSource)}
	}
	if len(req.Modules) > 0 && v.m.LoadedKnown && v.m.BuiltinKnown && v.m.AvailableKnown && v.k.ConfigSource == "" {
		return capability{support: unsupported, kernel: true, onlyLists: true, why: fmt.Sprintf("the kernel has no %s (no %s module is loaded, built in or installed, and no kernel config was found)", req.Feature, strings.Join(req.Modules, " or "))}
	}
	return capability{support: unconfirmed, why: fmt.Sprintf("whether the kernel has %s could not be read", req.Feature)}
}

// moduleFile judges a requirement whose options say m and whose modules
// are neither loaded, built in nor in the tree: missing when the tree was
// read, unconfirmed when it was not.
func (v kernelView) moduleFile(req backend.Requirement, opts []string) capability {
	mods := strings.Join(req.Modules, " or ")
	set := make([]string, len(opts))
	for i, o := range opts {
		set[i] = "CONFIG_" + o + "=m"
	}
	config := fmt.Sprintf("%s in %s", strings.Join(set, " and "), v.k.ConfigSource)
	if v.k.Release == "" {
		return capability{support: unconfirmed, why: fmt.Sprintf("%s says %s is a module, but the kernel release is unknown, so whether its file is installed cannot be confirmed", config, mods)}
	}
	dep := hostfs.ModulesDir + "/" + v.k.Release + "/modules.dep"
	if !v.m.AvailableKnown {
		return capability{support: unconfirmed, why: fmt.Sprintf("%s says %s is a module, but %s could not be read, so whether its file is installed is not confirmed", config, mods, dep)}
	}
	return capability{support: unsupported, kernel: true, why: fmt.Sprintf("the kernel has no %s module: %s, but %s does not list it (the module file is not installed; %s)",
		mods, config, dep, backend.ModulesPackage(v.k.Release))}
}

// assess judges every backend, the cluster's side of nftables mode included.
func assess(f facts.Facts) map[backend.Backend]capability { return assessOn(f, true) }

// assessOn judges every backend; cluster adds what nftables mode needs of
// RKE2's release, the CNI and the host nft (bench leaves it out: it
// measures the kernel's cost, whatever runs on top).
func assessOn(f facts.Facts, cluster bool) map[backend.Backend]capability {
	v := kernelView{k: f.Kernel, m: f.Modules}
	out := map[backend.Backend]capability{}
	for _, b := range backend.All {
		out[b] = v.backend(b, f)
		if why, failed := f.TrialFailed[string(b)]; failed {
			// A load the kernel rejected beats any configuration.
			out[b] = capability{support: unsupported, kernel: true, why: why}
			continue
		}
		if b == backend.NFTables && cluster && out[b].support != unsupported {
			if c := clusterFollowsNFTables(f); c.support > out[b].support {
				out[b] = c
			}
		}
	}
	return out
}

func (v kernelView) backend(b backend.Backend, f facts.Facts) capability {
	// Live proof beats configuration: rules or tables already in the kernel.
	if f.LiveRules.Probed && slices.Contains(f.LiveRules.KubeProxy, string(b)) {
		return capability{support: supported}
	}
	if b == backend.IptablesLegacy && len(f.Userspace.LegacyTablesIPv4)+len(f.Userspace.LegacyTablesIPv6) > 0 {
		return capability{support: supported}
	}
	reqs := b.RequirementsOn(v.k.Major, v.k.Minor)
	result := capability{support: supported}
	for _, req := range reqs {
		c := v.feature(req)
		if c.support > result.support {
			result = c
		}
	}
	if b != backend.NFTables || result.support == unsupported {
		return result
	}
	for _, req := range nftablesModeOptions {
		if c := v.feature(req); c.support == unsupported && !c.onlyLists {
			return c
		}
	}
	minK := backend.NFTablesMinKernel
	if f.Kernel.Release == "" {
		return capability{support: unsupported, why: "the kernel release is unknown, and kube-proxy's nftables mode needs " + fmt.Sprintf("%d.%d or later", minK[0], minK[1])}
	}
	if !v.atLeast(minK[0], minK[1]) {
		return capability{support: unsupported, kernel: true, why: fmt.Sprintf("kernel %s is older than %d.%d, which kube-proxy's nftables mode needs", f.Kernel.Release, minK[0], minK[1])}
	}
	if c := kubeSupportsNFTables(f); c.support > result.support {
		return c // on k3s also unconfirmed: bin/aux not extracted yet
	}
	return result
}

// allAbsent reports whether every option is explicitly not set.
func allAbsent(k facts.Kernel, opts []string) bool {
	for _, o := range opts {
		if k.Config[o] != facts.Absent {
			return false
		}
	}
	return true
}

func notSetText(opts []string) string {
	names := make([]string, len(opts))
	for i, o := range opts {
		names[i] = "CONFIG_" + o
	}
	if len(names) == 1 {
		return names[0] + " is not set"
	}
	return strings.Join(names, " and ") + " are not set"
}
