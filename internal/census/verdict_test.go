package census

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// A legacy table holds the node back when it has a rule, a writer's chain
// or a policy other than ACCEPT; an empty one (a probe's) does not. The
// writers are whose chains the names say.
func TestLegacyTables(t *testing.T) {
	builtin := func(name, policy string, n int) rules.Chain {
		return rules.Chain{Name: name, Hook: strings.ToLower(name), Policy: policy, Rules: make([]rules.Rule, n)}
	}
	holding, empty := legacyTables([]rules.Table{
		{Family: rules.IPv4, Name: "mangle", Chains: []rules.Chain{builtin("PREROUTING", "ACCEPT", 0), builtin("OUTPUT", "ACCEPT", 0)}},
		{Family: rules.IPv4, Name: "filter", Chains: []rules.Chain{builtin("INPUT", "DROP", 0)}},
		{Family: rules.IPv4, Name: "nat", Chains: []rules.Chain{builtin("PREROUTING", "ACCEPT", 1), {Name: "KUBE-SERVICES", Rules: make([]rules.Rule, 2)}, {Name: "KUBE-KUBELET-CANARY"}}},
	})
	if !slices.Equal(empty, []string{"ipv4 mangle"}) || len(holding) != 2 {
		t.Fatalf("holding %+v, empty %q: want filter and nat, and mangle empty", holding, empty)
	}
	if f := holding[0]; f.Table != "filter" || !slices.Equal(f.Policies, []string{"INPUT DROP"}) || !slices.Equal(f.Writers, []string{"unknown"}) {
		t.Errorf("filter %+v: want its DROP policy, writer unknown", f)
	}
	if n := holding[1]; n.Rules != 3 || n.UserChains != 2 || !slices.Equal(n.Writers, []string{"kube-proxy", "kubelet", "unknown"}) {
		t.Errorf("nat %+v: want 3 rules, 2 user chains, kube-proxy, kubelet and unknown", n)
	}
}

// The verdict: no names what holds the node back (five at most in the
// sentence), a namespace not read makes it unknown unless another says
// no, and only a full read of clean namespaces says yes.
func TestJudge(t *testing.T) {
	legacy := []LegacyTable{{Family: rules.IPv4, Table: "nat", Rules: 1, Writers: []string{"unknown"}}}
	var many []Namespace
	for i := range 7 {
		many = append(many, Namespace{Where: Where{Inode: uint64(i), PID: 10 + i, Comm: "sleep"}, Legacy: legacy})
	}
	for _, tc := range []struct {
		name string
		c    Census
		want string
		free bool
	}{
		{"clean", Census{Namespaces: []Namespace{{Where: Where{Host: true}}, {Where: Where{PID: 5}}}}, "can move to a kernel without legacy xtables: yes, none of the 2 network namespaces holds a rule in legacy xtables", true},
		{"a pod", Census{Namespaces: []Namespace{{Where: Where{Host: true}}, {Where: Where{PID: 5, Comm: "pause", PodUID: "u1"}, Legacy: legacy}}},
			"can move to a kernel without legacy xtables: no, because 1 namespace holds rules in legacy xtables: pod u1 (pid 5 pause): ipv4 nat", false},
		{"many", Census{Namespaces: many}, "and 2 more", false},
		{"unread", Census{Namespaces: []Namespace{{Where: Where{Host: true}}, {Where: Where{PID: 5, Comm: "x"}, Error: "entering its network namespace: operation not permitted"}}},
			"cannot tell, because 1 namespace could not be read: pid 5 x (entering its network namespace: operation not permitted)", false},
		{"unread beside a no", Census{Namespaces: []Namespace{{Where: Where{Host: true}, Legacy: legacy}, {Where: Where{PID: 5}, Error: "x"}}}, "no, because 1 namespace holds rules in legacy xtables: the host: ipv4 nat", false},
		{"bounded", Census{Namespaces: []Namespace{{Where: Where{Host: true}}}, NotVisited: 3}, "cannot tell, because 3 namespaces were left for a later round", false},
	} {
		c := tc.c
		c.judge()
		if !strings.Contains(c.Sentence(), tc.want) || c.LegacyFree != tc.free || c.HeldBackBy == nil {
			t.Errorf("%s: %q (free %v), want %q (free %v)", tc.name, c.Sentence(), c.LegacyFree, tc.want, tc.free)
		}
		if text := c.Text(); !strings.HasPrefix(text, c.Sentence()+"\n") {
			t.Errorf("%s: text does not start with the verdict:\n%s", tc.name, text)
		}
	}
	c := Census{Namespaces: many}
	c.judge()
	if n := strings.Count(c.Sentence(), "pid "); n != maxNamed || len(c.HeldBackBy) != 7 {
		t.Errorf("the sentence names %d namespaces and held_back_by has %d: want %d and 7", n, len(c.HeldBackBy), maxNamed)
	}
	if text := c.Text(); strings.Count(text, "ipv4 nat (1 rules") != 7 {
		t.Errorf("the rows do not name all 7:\n%s", text)
	}
}
