package prove

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts/live"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kpargs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// addOns judges res further after Run, from one probe of the
// distribution's own files (k3s's config and data dir on k3s, not RKE2's),
// then puts k3s's words into every fix once.
func (c *Command) addOns(ctx context.Context, opts verify.Options, res *verify.Result) {
	// Only a node on nftables (the skew) or one whose result is not ok
	// (the refused args) is judged further: an ok watch beat elsewhere
	// probes nothing, and runs no k3s --version.
	var f facts.Facts
	if res.Expect == backend.NFTables || res.Verdict != verify.VerdictOK {
		f = addOnFacts(c.Root, opts.Distribution, res.Expect)
	}
	// The image's nft against the host's: a finding only on nftables.
	AddNftSkew(ctx, c.Root, f, res)
	// ipvs's state left by an earlier ipvs mode (sets, kube-ipvs0,
	// virtual servers): a finding only on a node out of ipvs mode.
	verify.AddIPVSLeftovers(opts, res)
	// A kube-proxy that cannot start: the item of RKE2's config to remove.
	AddRefusedKubeProxyArgs(c.Root, c.ConfigFile, f, res)
}

// addOnFacts is the one probe the add-ons judge, of kind's files; the
// host's nft is asked only for a node expected on nftables, the only mode
// that runs an nft of its own.
func addOnFacts(root hostfs.Root, kind distro.Kind, expect backend.Backend) facts.Facts {
	nft := expect == backend.NFTables
	// k3s's data dir names no version (data/<digest>): only its binary
	// tells which release's kube-proxy the args and the skew are judged by.
	return facts.VerifyAddOnFacts(root, facts.Options{Distribution: kind, ToolVersions: nft, AskNft: nft, RKE2Binary: kind.Profile().VersionFromBinary})
}

// KindRefusedKubeProxyArg is a kube-proxy-arg item in the operator's RKE2
// config that the release RKE2 runs refuses (a removed or locked feature
// gate, ipvs where it is off): kube-proxy does not start, so its rules are
// missing, and this names why.
const KindRefusedKubeProxyArg = "kube-proxy-refused-arg"

// AddRefusedKubeProxyArgs adds, to a result that is not ok, a finding per
// such item (decide.KubeProxyRefusals, the check apply runs before the
// start), so a node whose kube-proxy cannot start is told the line to
// remove, not only that rules are missing. f is facts.VerifyAddOnFacts of
// the node's distribution: its config, and the release judged (on RKE2 the
// one its data directory holds: the one running). Call it after Run.
func AddRefusedKubeProxyArgs(root hostfs.Root, configFile string, f facts.Facts, res *verify.Result) {
	if res == nil || res.Verdict == verify.VerdictOK {
		return
	}
	if configFile == "" {
		configFile = hostfs.ConfigFile
	}
	c, err := config.Load(root, configFile, nil, f.Cmdline)
	if err != nil {
		return // the plan verify judges was made on it: apply names the problem
	}
	var findings []verify.Finding
	name := f.RKE2.Distribution.Name()
	for _, fd := range kpargs.Refusing(decide.KubeProxyRefusals(f, c, decide.Decision{Disabled: true})) {
		findings = append(findings, verify.Finding{Kind: KindRefusedKubeProxyArg, Message: fd.String(),
			Fix: "remove that item from " + fd.File + " (rke2-proxy-backend never edits " + name + "'s config), then restart " + name})
	}
	res.Add(findings, nil)
}

// AddNftSkew judges f (facts.VerifyAddOnFacts with ToolVersions and
// AskNft: the distribution's version, the host's nft from dpkg's status
// file or `nft --version`) with, on the real host, the sets carrying user
// data read now, and adds verify.NftSkewFindings' finding or warning to
// res. Call it after verify.Run.
func AddNftSkew(ctx context.Context, root hostfs.Root, f facts.Facts, res *verify.Result) {
	if res == nil || res.Expect != backend.NFTables {
		return
	}
	var notes []string
	if root.IsHost() {
		sets, err := live.ForeignUserdataSets(ctx)
		if err != nil {
			notes = append(notes, "sets with user data not read (nft version skew judged without them): "+err.Error())
		} else {
			f.LiveRules.UserdataSets, f.LiveRules.UserdataSetsRead = sets, true
		}
	}
	h := facts.SkewHost(f)
	findings, warnings := verify.NftSkewFindings(res.Expect, skew.Judge(skew.Default(), h), h)
	res.Add(findings, warnings, notes...)
}
