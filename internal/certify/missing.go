package certify

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/certified"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
)

// Kinds of what an image lacks.
const (
	KernelModule = "kernel-module"
	KernelConfig = "kernel-config"
	Userspace    = "userspace"
)

// backendOf is one backend's verdict: the decision's judgement, what the
// kernel lacks with what to add, and the image's userspace (a missing
// or known-bad iptables or nft). Missing on a runnable backend is what it
// would run badly without.
func backendOf(f facts.Facts, j decide.Judgement) certified.Backend {
	b := certified.Backend{Name: string(j.Backend), Runnable: j.Support != decide.NotRunnable, Confirmed: j.Support == decide.Supported}
	if j.Why != "" {
		b.Reasons = append(b.Reasons, capital(j.Why)+".")
	}
	for _, req := range j.Missing {
		b.Missing = append(b.Missing, kernelMissing(f.Kernel, req))
	}
	if b.Runnable && b.Confirmed {
		b.Reasons = append(b.Reasons, fmt.Sprintf("Every kernel feature it needs is in the image (%s).", evidence(f)))
	}
	if j.Backend.UsesIptables() {
		iptablesUserspace(f, &b)
	} else {
		nftUserspace(f, &b)
	}
	return b
}

// kernelMissing says what a missing kernel feature takes: the module file
// (its config says m, or no config was read) from the package that ships
// it, or another kernel when the config leaves the feature out.
func kernelMissing(k facts.Kernel, req backend.Requirement) certified.Missing {
	built := k.ConfigSource == ""
	var options []string
	for _, o := range req.Options {
		options = append(options, "CONFIG_"+o)
		if k.Config[o] == facts.Module {
			built = true
		}
	}
	if built {
		return certified.Missing{Kind: KernelModule, What: req.Feature, Modules: req.Modules,
			Add: fmt.Sprintf("the module file (%s.ko): %s; then run depmod %s", strings.Join(req.Modules, ".ko or "), backend.ModulesPackage(k.Release), k.Release)}
	}
	return certified.Missing{Kind: KernelConfig, What: req.Feature, Modules: req.Modules,
		Add: fmt.Sprintf("a kernel built with %s (=y or =m): %s does not set it", strings.Join(options, " or "), k.ConfigSource)}
}

// iptablesUserspace: kubelet writes its hint chains with the image's own
// iptables, and iptables 1.8.0 to 1.8.4 add duplicate rules (k3s#3117).
func iptablesUserspace(f facts.Facts, b *certified.Backend) {
	u := f.Userspace
	if u.IptablesPath == "" {
		b.Missing = append(b.Missing, certified.Missing{Kind: Userspace, What: "the iptables command (kubelet writes its KUBE-IPTABLES-HINT chain with it, which kube-proxy's image reads to pick its backend)",
			Add: hostfs.InstallHint("iptables")})
		b.Reasons = append(b.Reasons, "The image has no iptables command: kubelet cannot write its hint chains.")
	}
	if v := u.Iptables; v.Version != "" && !facts.VersionBelow(v.Version, 1, 8, 0) && facts.VersionBelow(v.Version, 1, 8, 5) {
		b.Missing = append(b.Missing, certified.Missing{Kind: Userspace, What: "iptables 1.8.5 or later (1.8.0 to 1.8.4 add duplicate rules on every resync, k3s#3117)",
			Add: "a newer iptables package"})
		b.Reasons = append(b.Reasons, fmt.Sprintf("The image's iptables is %s (per %s), which adds duplicate rules on every resync.", v.Version, v.Source))
	}
}

// nftUserspace: nftables mode crashes on an nft older than 1.0.1 and
// fails when kube-proxy's nft cannot read the sets the image's nft writes.
func nftUserspace(f facts.Facts, b *certified.Backend) {
	if v := f.Userspace.Nft; v.Version != "" && facts.VersionBelow(v.Version, 1, 0, 1) {
		b.Missing = append(b.Missing, certified.Missing{Kind: Userspace, What: "nft 1.0.1 or later (older ones crash on kube-proxy's rules, kubernetes#122743)",
			Add: "a newer nftables package"})
	}
	h := facts.SkewHost(f)
	r := skew.Judge(skew.Default(), h)
	if len(r.Bad) == 0 {
		return
	}
	b.Runnable, b.Confirmed = false, false
	b.Reasons = append(b.Reasons, capital(r.Why(h))+".")
	b.Missing = append(b.Missing, certified.Missing{Kind: Userspace, What: "an nft that kube-proxy's nft can read the sets of", Add: r.Fix()})
}

// evidence names the files the kernel verdict rests on.
func evidence(f facts.Facts) string {
	var src []string
	if f.Kernel.ConfigSource != "" {
		src = append(src, f.Kernel.ConfigSource)
	}
	if f.Modules.AvailableKnown && f.Kernel.Release != "" {
		src = append(src, hostfs.ModulesDir+"/"+f.Kernel.Release+"/modules.dep")
	}
	if len(src) == 0 {
		return "the module lists"
	}
	return "per " + strings.Join(src, " and ")
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
