package decide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Hysteresis for prefer: [cheapest, ...]: a node leaves the backend RKE2 ran
// with last time only for one that costs less than SwitchRatio of it AND
// saves more than SwitchFloorSeconds per full sync. Measurements on a busy
// node move by tens of percent; without both bounds a node would flip at
// every boot on noise, and each flip strands rules until a reboot.
const (
	SwitchRatio        = 0.75
	SwitchFloorSeconds = 0.2
)

// cheapest applies prefer: [cheapest, ...]: among the backends the host can
// run (nftables only when prefer also lists it: it needs the CNI switched),
// the one whose full sync bench measured cheapest at the last recorded size.
// It runs after everything that pins a backend (overrides, RKE2's config,
// this boot's plan, live rules, legacy triggers), so it never moves a node
// whose rules are live. ok is false when it does not decide; the reasons
// then say why, and the rest of auto's order decides.
func (s *state) cheapest() (backend.Backend, bool) {
	if len(s.c.Prefer) == 0 || string(s.c.Prefer[0]) != config.PreferCheapest {
		return "", false
	}
	if live := s.f.LiveRules; live.Probed && len(live.KubeProxy) > 0 {
		s.say("The prefer list starts with cheapest, but kube-proxy rules are live (in %s), and a running node is never moved for cost, so the rest of auto's order decides.", strings.Join(live.KubeProxy, ", "))
		return "", false
	}
	cost := s.f.Cost
	switch {
	case cost == nil:
		s.say("The prefer list starts with cheapest, but no bench result is recorded in %s (run `rke2-proxy-backend bench`), so the rest of auto's order decides.", hostfs.BenchFile)
		return "", false
	case cost.Stale != "":
		s.say("The prefer list starts with cheapest, but the bench result in %s no longer describes this node: %s; run `rke2-proxy-backend bench` again. The rest of auto's order decides.", hostfs.BenchFile, cost.Stale)
		return "", false
	}
	nftOK := slices.Contains(s.c.Prefer, backend.NFTables)
	if why := skewBlocksChoice(s.f); nftOK && why != "" && s.usable(backend.NFTables) {
		s.say("The prefer list starts with cheapest and lists nftables, but %s, so nftables is not a candidate.", why)
		nftOK = false
	}
	var cands []backend.Backend
	for _, b := range backend.All {
		if s.usable(b) && (b != backend.NFTables || nftOK) {
			cands = append(cands, b)
		}
	}
	if len(cands) < 2 {
		return "", false // one choice or none: the kernel decides, not cost
	}
	full := map[backend.Backend]float64{}
	var figures, unmeasured []string
	for _, b := range cands {
		r, ok := cost.Result(b)
		st, okStep := r.Step(bench.StepFull)
		if !ok || !okStep {
			unmeasured = append(unmeasured, string(b))
			continue
		}
		full[b] = st.WallSeconds
		figures = append(figures, fmt.Sprintf("%s %s", b, seconds(st.WallSeconds)))
	}
	if len(unmeasured) > 0 {
		s.say("The prefer list starts with cheapest, but bench has no figure for %s, which this host can run (run `rke2-proxy-backend bench` again), so the rest of auto's order decides.", strings.Join(unmeasured, " and "))
		return "", false
	}
	low := cands[0]
	for _, b := range cands[1:] {
		if full[b] < full[low] {
			low = b
		}
	}
	measured := fmt.Sprintf("at %d services (the last bench, kernel %s) a full sync took %s", cost.Services, cost.Kernel, strings.Join(figures, ", "))
	chosen := low
	if prev, where := ranLastTime(s.f); prev != "" && prev != low && slices.Contains(cands, prev) {
		saved := full[prev] - full[low]
		if full[low] < full[prev]*SwitchRatio && saved > SwitchFloorSeconds {
			s.say("The prefer list starts with cheapest: %s; %s is cheaper than %s, which %s ran with last time (per %s), by more than %.0f%% and %s, so it switches to %s.",
				measured, low, prev, s.name(), where, (1-SwitchRatio)*100, seconds(SwitchFloorSeconds), low)
		} else {
			chosen = prev
			s.say("The prefer list starts with cheapest: %s; %s, which %s ran with last time (per %s), is kept: %s does not save more than %.0f%% and %s, and switching on noise would strand rules.",
				measured, prev, s.name(), where, low, (1-SwitchRatio)*100, seconds(SwitchFloorSeconds))
		}
	} else {
		s.say("The prefer list starts with cheapest: %s, so %s, the cheapest, is used.", measured, low)
	}
	if alt := s.f.Userspace.IptablesAlternative; chosen.UsesIptables() && (alt == "legacy" || alt == "nft") && alt != chosen.IptablesMode() {
		if embedded(s.f) {
			s.sayK3sOtherAlternative(byIptablesMode(alt), chosen)
			return chosen, true
		}
		s.say("The host's iptables command is %s, and kubelet writes its hint chains with it: point it at %s too (update-alternatives --set iptables /usr/sbin/iptables-%s, and ip6tables likewise) so both sit in one backend.",
			byIptablesMode(alt), chosen, chosen.IptablesMode())
	}
	return chosen, true
}

// ranLastTime is the backend our own drop-in told RKE2 at its last start
// (60-proxy-backend.yaml persists across boots, unlike plan.json), with
// the file; "" when there is none. On k3s the drop-in holds only the
// proxy mode (k3sRanLastTime).
func ranLastTime(f facts.Facts) (backend.Backend, string) {
	ours := ourDropIn(f)
	eff := f.RKE2.Config
	mode := ourSetting(eff, ours, rke2.KeyKubeProxyArg, "proxy-mode")
	switch mode {
	case "nftables":
		return backend.NFTables, ours
	case "iptables":
		if embedded(f) {
			return k3sRanLastTime(f, ours)
		}
		if im := ourSetting(eff, ours, rke2.KeyKubeProxyExtraEnv, "IPTABLES_MODE"); im == "legacy" || im == "nft" {
			return byIptablesMode(im), ours
		}
	}
	return "", ""
}

// ourSetting is the last name=value item of key that came from file.
func ourSetting(eff rke2.Effective, file, key, name string) string {
	items := eff.Strings(key)
	from := eff.ItemOrigin[key]
	if len(from) != len(items) {
		from = slices.Repeat([]string{eff.Origin[key]}, len(items))
	}
	for i := len(items) - 1; i >= 0; i-- {
		k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(items[i]), "--"), "=")
		if ok && k == name && from[i] == file {
			return v
		}
	}
	return ""
}

// seconds prints a duration for a reason: 3 significant digits.
func seconds(v float64) string {
	return fmt.Sprintf("%.3g s", v)
}
