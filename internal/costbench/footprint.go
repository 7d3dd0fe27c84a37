// Package costbench measures what kube-proxy's rule loads cost on this node:
// for each backend it loads the renderer's footprint for N services with the
// backend's own loader, the way kube-proxy does (one *-restore per family,
// one nft transaction per family), then a partial sync after one service's
// endpoint moved, and times the loader processes. It only ever runs inside
// a network namespace it created (see isolate.go).
package costbench

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// footprint is the before and after of one bench: the full ruleset for N
// services, and the same with one endpoint of one service moved to a new
// pod address (the commonest change kube-proxy syncs).
type footprint struct {
	before, after *rules.Ruleset
}

func newFootprint(b backend.Backend, services int) (footprint, error) {
	before, err := expected.Render(expected.Options{Backend: b, Services: services})
	if err != nil {
		return footprint{}, fmt.Errorf("render %s footprint for %d services: %w", b, services, err)
	}
	after, err := expected.Render(expected.Options{Backend: b, Services: services})
	if err != nil {
		return footprint{}, err
	}
	for i := range after.Tables {
		t := &after.Tables[i]
		var err error
		if b == backend.NFTables {
			err = moveNFTEndpoint(t)
		} else if t.Name == "nat" {
			err = moveIptablesEndpoint(t)
		}
		if err != nil {
			return footprint{}, fmt.Errorf("%s %s table %s: %w", b, t.Family, t.Name, err)
		}
	}
	return footprint{before: before, after: after}, nil
}

// movedAddr is the new pod address of the moved endpoint: outside the
// renderer's synthetic endpoint ranges, so it collides with nothing.
func movedAddr(f rules.Family) netip.Addr {
	if f == rules.IPv6 {
		return netip.MustParseAddr("fd00:0:0:10:ffff::fe")
	}
	return netip.MustParseAddr("10.255.255.254")
}

// moveIptablesEndpoint moves the last endpoint of the first KUBE-SVC- chain:
// the service chain's jump and the KUBE-SEP- chain (whose name hashes the
// endpoint) change, as kube-proxy writes them.
func moveIptablesEndpoint(t *rules.Table) error {
	si := slices.IndexFunc(t.Chains, func(c rules.Chain) bool { return strings.HasPrefix(c.Name, "KUBE-SVC-") })
	if si < 0 {
		return nil // no services: nothing to move
	}
	svc := &t.Chains[si]
	ri := -1
	for i, r := range svc.Rules {
		if strings.HasPrefix(r.Jump, "KUBE-SEP-") {
			ri = i
		}
	}
	if ri < 0 {
		return fmt.Errorf("service chain %s jumps to no endpoint chain", svc.Name)
	}
	oldSEP := svc.Rules[ri].Jump
	name, oldHP, ok := strings.Cut(svc.Rules[ri].Comment, " -> ")
	if !ok {
		return fmt.Errorf("service chain %s: endpoint rule comment %q is not \"SERVICE -> ENDPOINT\"", svc.Name, svc.Rules[ri].Comment)
	}
	old, err := netip.ParseAddrPort(oldHP)
	if err != nil {
		return fmt.Errorf("service chain %s: endpoint %q: %w", svc.Name, oldHP, err)
	}
	newHP := netip.AddrPortFrom(movedAddr(t.Family), old.Port()).String()
	newSEP := expected.IptablesEndpointChain(name, "tcp", newHP)
	rep := strings.NewReplacer(oldSEP, newSEP, oldHP, newHP, "-s "+old.Addr().String()+"/", "-s "+movedAddr(t.Family).String()+"/")
	r := &svc.Rules[ri]
	r.Text, r.Comment, r.Jump = rep.Replace(r.Text), rep.Replace(r.Comment), newSEP
	return renameChain(t, oldSEP, newSEP, rep, old.Addr().String())
}

// moveNFTEndpoint moves the last endpoint of the first service- chain: the
// chain's numgen vmap and the endpoint- chain (named after the endpoint).
func moveNFTEndpoint(t *rules.Table) error {
	// Per-service chains are "service-HASH-ns/svc/proto/port"; the fixed
	// chains (service-endpoints-check) have no "/".
	si := slices.IndexFunc(t.Chains, func(c rules.Chain) bool {
		return strings.HasPrefix(c.Name, "service-") && strings.Contains(c.Name, "/")
	})
	if si < 0 {
		return nil
	}
	svc := &t.Chains[si]
	var oldEP string
	ri := -1
	for i, r := range svc.Rules {
		if gotos := strings.Split(r.Text, "goto "); len(gotos) > 1 {
			oldEP = strings.TrimRight(strings.Fields(gotos[len(gotos)-1])[0], ",}")
			ri = i
		}
	}
	if ri < 0 {
		// Kubernetes 1.36 and later DNAT in the service chain itself
		// (numgen map of address . port, or one dnat for one endpoint);
		// endpoint- chains remain only for session affinity.
		return moveInlineNFTEndpoint(svc)
	}
	// endpoint-HASH8-ns/svc/proto/port__ADDR/PORT
	_, rest, _ := strings.Cut(strings.TrimPrefix(oldEP, "endpoint-"), "-")
	svcPart, _, ok := strings.Cut(rest, "__")
	parts := strings.Split(svcPart, "/")
	if !ok || len(parts) != 4 {
		return fmt.Errorf("endpoint chain %q is not endpoint-HASH-ns/svc/proto/port__endpoint", oldEP)
	}
	ep := t.Chains[slices.IndexFunc(t.Chains, func(c rules.Chain) bool { return c.Name == oldEP })]
	var oldHP string
	for _, r := range ep.Rules {
		if _, hp, ok := strings.Cut(r.Text, "dnat to "); ok {
			oldHP = strings.Fields(hp)[0]
		}
	}
	old, err := netip.ParseAddrPort(oldHP)
	if err != nil {
		return fmt.Errorf("endpoint chain %s: no dnat to ADDR:PORT (%q): %w", oldEP, oldHP, err)
	}
	newHP := netip.AddrPortFrom(movedAddr(t.Family), old.Port()).String()
	newEP := "endpoint-" + expected.NFTablesEndpointChainBase(parts[0], parts[1], parts[2], parts[3], newHP)
	rep := strings.NewReplacer(oldEP, newEP, "dnat to "+oldHP, "dnat to "+newHP, "saddr "+old.Addr().String()+" ", "saddr "+movedAddr(t.Family).String()+" ")
	svc.Rules[ri].Text = rep.Replace(svc.Rules[ri].Text)
	return renameChain(t, oldEP, newEP, rep, old.Addr().String())
}

// renameChain gives chain from its new name and rewrites its rules; the old
// address must be gone from them, or the renderer's rule shape changed under
// us and the "partial sync" would load something kube-proxy never writes.
func renameChain(t *rules.Table, from, to string, rep *strings.Replacer, oldAddr string) error {
	i := slices.IndexFunc(t.Chains, func(c rules.Chain) bool { return c.Name == from })
	if i < 0 {
		return fmt.Errorf("endpoint chain %s is missing", from)
	}
	c := &t.Chains[i]
	c.Name = to
	rs := make([]rules.Rule, len(c.Rules))
	for k, r := range c.Rules {
		r.Text = rep.Replace(r.Text)
		if strings.Contains(r.Text, oldAddr+"/") || strings.Contains(r.Text, oldAddr+" ") || strings.Contains(r.Text, oldAddr+":") {
			return fmt.Errorf("endpoint chain %s: rule %q still names the old endpoint %s", to, r.Text, oldAddr)
		}
		rs[k] = r
	}
	c.Rules = rs
	return nil
}

// moveInlineNFTEndpoint moves the last endpoint address of the service
// chain's dnat rule, which then is the only rule that changes: kube-proxy
// flushes and refills that one chain.
func moveInlineNFTEndpoint(svc *rules.Chain) error {
	for i := range svc.Rules {
		r := &svc.Rules[i]
		_, targets, ok := strings.Cut(r.Text, "dnat ")
		if !ok {
			continue
		}
		var last netip.Addr
		for _, w := range strings.FieldsFunc(targets, func(c rune) bool { return strings.ContainsRune(" ,{}[]", c) }) {
			if ap, err := netip.ParseAddrPort(w); err == nil {
				w = ap.Addr().String()
			}
			if a, err := netip.ParseAddr(w); err == nil {
				last = a
			}
		}
		if !last.IsValid() {
			return fmt.Errorf("service chain %s: dnat rule %q names no endpoint address", svc.Name, r.Text)
		}
		moved := movedAddr(rules.IPv4)
		if last.Is6() {
			moved = movedAddr(rules.IPv6)
		}
		at := strings.LastIndex(r.Text, last.String())
		r.Text = r.Text[:at] + moved.String() + r.Text[at+len(last.String()):]
		return nil
	}
	return fmt.Errorf("service chain %s has neither an endpoint map nor a dnat rule", svc.Name)
}
