package apply

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2/dropin"
)

// renderFor renders the drop-in for the node's distribution: on k3s with
// k3s's keys and, where it may, prefer-bundled-bin, and the sentence that
// says why (a dry run shows the same bytes a real run writes).
func renderFor(o Options, f facts.Facts, d decide.Decision) (data []byte, k3sReason string, err error) {
	if !o.Distribution.Profile().KubeProxyEmbedded {
		data, err = dropin.Render(dropIn(d))
		return data, "", err
	}
	prefer, why := preferBundledBin(f, d)
	data, err = dropin.RenderK3s(dropIn(d), prefer)
	return data, why, err
}

// k3sStep is what a real apply does on k3s beside the drop-in: the
// bin/aux links reset so a new IPTABLES_MODE takes effect. Its reasons,
// after why (renderFor's), name the k3s facts.
func k3sStep(o Options, f facts.Facts, d decide.Decision, why string) []string {
	reasons := []string{why}
	if d.IptablesMode != "" {
		reasons = append(reasons, resetAuxLinks(o, o.Distribution.Profile().AuxDir(f.RKE2.DataDir), d.IptablesMode))
	}
	return reasons
}

// preferBundledBin is whether the drop-in may set prefer-bundled-bin,
// and why: not when the operator set it, nor on a release that does not
// know it (k3s refuses an unknown key).
func preferBundledBin(f facts.Facts, d decide.Decision) (bool, string) {
	k := f.RKE2.Kubernetes
	// The operator's setting is the last one in a file other than our own
	// drop-in: the merged value is ours whenever our drop-in (from an
	// earlier apply, merged after config.yaml and 50-*.yaml) sets it too.
	op, set := f.RKE2.Config.LastExcept(rke2.KeyPreferBundledBin, rke2.DropInPath(f.RKE2.ConfigFile))
	switch {
	case set:
		return false, fmt.Sprintf("k3s's config sets %s: %s itself in %s: left as the operator set it, and the drop-in does not set it.", rke2.KeyPreferBundledBin, op.Value, op.File)
	case rke2.SupportsPreferBundledBin(k):
		return true, fmt.Sprintf("k3s %s knows %s: kube-proxy, flannel and kube-router run k3s's bundled iptables (bin/aux, which honours IPTABLES_MODE), not the host's.", f.RKE2.Version, rke2.KeyPreferBundledBin)
	case !k.Known():
		return false, fmt.Sprintf("k3s's version is unknown, so %s is not set (a k3s that does not know it refuses to start): the host's iptables, if installed, comes first in k3s's PATH and IPTABLES_MODE reaches only k3s's bundled one.", rke2.KeyPreferBundledBin)
	}
	return false, fmt.Sprintf("k3s %s predates %s (v1.26.0, v1.25.5, v1.24.9, v1.23.15): the host's iptables, if installed, comes first in k3s's PATH and must match %s.", f.RKE2.Version, rke2.KeyPreferBundledBin, d.Backend)
}

// auxLinks are k3s-root's links in bin/aux: shipped pointing at
// iptables-detect.sh, which honours IPTABLES_MODE (else guesses) and then
// has xtables-set-mode.sh point them at xtables-<mode>-multi for good.
var auxLinks = []string{"ip6tables", "ip6tables-restore", "ip6tables-save", "iptables", "iptables-restore", "iptables-save"}

// resetAuxLinks points the links a previous start stuck on the other mode
// back at iptables-detect.sh, so this start's IPTABLES_MODE is honoured:
// otherwise the first choice ever made stays, whatever the plan says. Each
// link is replaced atomically (a new link renamed over it); anything that
// is not such a link is left alone. It returns the sentence for the reasons.
func resetAuxLinks(o Options, auxDir, mode string) string {
	dir, err := o.Root.Resolve(auxDir)
	if err != nil || !o.Root.Exists(path.Join(auxDir, "iptables-detect.sh")) {
		return fmt.Sprintf("No k3s-root iptables wrappers in %s yet (k3s extracts them on its first start): IPTABLES_MODE=%s decides there.", auxDir, mode)
	}
	want := "xtables-" + mode + "-multi"
	var reset, stuck []string
	for _, name := range auxLinks {
		p := filepath.Join(dir, name)
		target, err := os.Readlink(p)
		if err != nil {
			continue
		}
		switch base := path.Base(target); {
		case base == want:
			stuck = append(stuck, name)
		case base == "xtables-legacy-multi" || base == "xtables-nft-multi":
			if err := relink(p, "iptables-detect.sh"); err != nil {
				o.log("warning: resetting %s: %v", p, err)
				continue
			}
			o.log("reset %s (-> %s, a choice an earlier start made) to iptables-detect.sh", o.Root.Path(path.Join(auxDir, name)), target)
			reset = append(reset, name+" (was "+base+")")
		}
	}
	switch {
	case len(reset) > 0:
		return fmt.Sprintf("k3s's bin/aux links %s were stuck on the other mode; reset to iptables-detect.sh so IPTABLES_MODE=%s takes effect.", strings.Join(reset, ", "), mode)
	case len(stuck) > 0:
		return fmt.Sprintf("k3s's bin/aux links already point at %s, the planned mode.", want)
	}
	return fmt.Sprintf("k3s's bin/aux links point at iptables-detect.sh: it honours IPTABLES_MODE=%s on k3s's next start.", mode)
}

// relink replaces the link p with one to target, atomically.
func relink(p, target string) error {
	tmp := p + ".rke2-proxy-backend.tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(p))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync() // the rename survives a power loss
}
