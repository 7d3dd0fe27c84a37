package switchover

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// HintTidier removes kubelet's hint and canary chains that the kubelet
// before the restart left in the other iptables backend.
type HintTidier interface {
	Tidy(ctx context.Context, kubeProxy backend.Backend) (*HintTidy, error)
}

// HintTidy is what one tidy found and did.
type HintTidy struct {
	// Want is where kubelet's chains belong for kube-proxy's backend.
	Want backend.Backend
	// Written lists the families whose hint kubelet wrote in Want.
	Written []rules.Family
	// Removed lists each chain removed, one plain line each.
	Removed []string
	// Left lists leftovers kept: in a family kubelet has not written in
	// Want (the host's iptables alternative still points at the other
	// backend), or not in kubelet's shape (rules in it, or jumps to it).
	Left []string
}

// LiveHints is the HintTidier for this network namespace.
//
// kubelet writes KUBE-IPTABLES-HINT (mangle) and KUBE-KUBELET-CANARY
// (mangle, nat, filter) with the host's iptables at its start and never
// removes them, so after a switch between iptables flavours the old
// kubelet's chains stay behind. They steer no packet (empty, nothing
// jumps to them), but verify reports them, and both readers of the hint
// are misled by two copies: iptables-wrappers picks nft whenever nft has
// one, and auto trusts the hint only when one backend has it. Once the
// restarted kubelet has written its chains where kube-proxy's backend
// wants them, the old copies are provably stale: the kubelet that owned
// them is gone. Until then (the alternative was not moved) they are the
// live kubelet's, and are kept. KUBE-FIREWALL, which kubelet shares with
// kube-proxy and which holds a rule, is never touched.
type LiveHints struct {
	Run cleanup.Runner
}

var iptablesBackends = []backend.Backend{backend.IptablesLegacy, backend.IptablesNFT}

func (h LiveHints) Tidy(ctx context.Context, kubeProxy backend.Backend) (*HintTidy, error) {
	run := h.Run
	if run == nil {
		run = cleanup.Exec
	}
	t := &HintTidy{Want: verify.HintBackend(kubeProxy)}
	// Chain names, rule counts and jumps are all a tidy needs: both
	// backends are read in this process, and a tool runs only to remove.
	live, err := inProcess(ctx, t.Want)
	if err != nil {
		return nil, fmt.Errorf("read kubelet's hint chains in %s: %w", t.Want, err)
	}
	t.Written = hintFamilies(live)
	for _, b := range iptablesBackends {
		if b == t.Want {
			continue
		}
		rs, err := inProcess(ctx, b)
		if err != nil {
			return nil, fmt.Errorf("read kubelet's leftover chains in %s: %w", b, err)
		}
		p, left := hintPlan(rs, t.Written)
		t.Left = append(t.Left, left...)
		if p.Empty() {
			continue
		}
		err = cleanup.Apply(ctx, run, p)
		if errors.Is(err, exec.ErrNotFound) {
			// No tools for b: whatever wrote there, the chains stay.
			for _, r := range p.Removals {
				t.Left = append(t.Left, fmt.Sprintf("%s (cannot be removed here: %v)", r, err))
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("remove kubelet's leftover chains from %s: %w", b, err)
		}
		t.Removed = append(t.Removed, p.Removals...)
	}
	return t, nil
}

// hintFamilies lists the families whose mangle table holds kubelet's hint.
func hintFamilies(rs *rules.Ruleset) []rules.Family {
	var out []rules.Family
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		if rs.Table(fam, "mangle").Chain("KUBE-IPTABLES-HINT") != nil {
			out = append(out, fam)
		}
	}
	return out
}

// hintPlan plans the removal of kubelet's hint and canary chains from rs
// in the families kubelet now writes elsewhere; left names what stays.
func hintPlan(rs *rules.Ruleset, written []rules.Family) (p *cleanup.Plan, left []string) {
	p = &cleanup.Plan{Backend: rs.Backend, Removals: []string{}, Scripts: map[rules.Family]string{}}
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		var b strings.Builder
		for _, tb := range rs.Tables {
			if tb.Family != fam {
				continue
			}
			var drop []string
			for _, c := range tb.Chains {
				if !ownership.IsKubeletHintChain(c.Name) {
					continue
				}
				where := fmt.Sprintf("%s %s %s chain %s", rs.Backend, fam, tb.Name, c.Name)
				switch {
				case !slices.Contains(written, fam):
					left = append(left, where+" (kubelet has not written its hint where kube-proxy's backend wants it)")
				case len(c.Rules) > 0 || referenced(tb, c.Name):
					left = append(left, where+" (not kubelet's shape: it holds rules or is jumped to)")
				default:
					drop = append(drop, c.Name)
					p.Removals = append(p.Removals, where)
				}
			}
			if len(drop) == 0 {
				continue
			}
			fmt.Fprintf(&b, "*%s\n", tb.Name)
			for _, c := range drop {
				fmt.Fprintf(&b, "-X %s\n", c)
			}
			b.WriteString("COMMIT\n")
		}
		if b.Len() > 0 {
			p.Scripts[fam] = b.String()
		}
	}
	return p, left
}

func referenced(tb rules.Table, chain string) bool {
	for _, c := range tb.Chains {
		for _, r := range c.Rules {
			if r.Jump == chain {
				return true
			}
		}
	}
	return false
}
