package cleanup

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

// renderedWith is kube-proxy's rendered legacy footprint (2 Services) with
// more chains in the IPv4 filter table, each jumped to from INPUT.
func renderedWith(t *testing.T, chains ...string) *rules.Ruleset {
	t.Helper()
	rs, err := expected.Render(expected.Options{Backend: backend.IptablesLegacy, Services: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rs.Tables {
		if rs.Tables[i].Name != "filter" || rs.Tables[i].Family != rules.IPv4 {
			continue
		}
		for _, c := range chains {
			rs.Tables[i].Chains = append(rs.Tables[i].Chains, rules.Chain{Name: c})
			rs.Tables[i].Chains[0].Rules = append(rs.Tables[i].Chains[0].Rules, rules.Rule{Text: "-j " + c, Jump: c})
		}
	}
	return rs
}

func TestComputeIptables(t *testing.T) {
	// Someone else's chain with a jump from INPUT must stay (on RKE2,
	// kube-router is not kube-proxy's companion).
	p := Compute(renderedWith(t, "KUBE-ROUTER-INPUT"))
	v4 := p.Scripts[rules.IPv4]
	check.Says(t, "ipv4 script", v4,
		"*nat\n:KUBE-MARK-MASQ - [0:0]\n",
		"-D POSTROUTING -m comment --comment \"kubernetes postrouting rules\" -j KUBE-POSTROUTING\n",
		"-X KUBE-PROXY-CANARY\n",
		"-D INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes load balancer firewall\" -j KUBE-PROXY-FIREWALL\n",
	)
	for _, never := range []string{"KUBE-FIREWALL\n", "KUBE-IPTABLES-HINT", "KUBE-KUBELET-CANARY", "KUBE-ROUTER-INPUT", "-X INPUT"} {
		if strings.Contains(v4, never) {
			t.Errorf("ipv4 script touches %q:\n%s", never, v4)
		}
	}
	// Per family: 12 kube-proxy jumps, 12 fixed chains (6 filter, 5 nat, 1
	// mangle) and 2 services with 3 chains each.
	if got, want := len(p.Removals), 2*(12+12+2*3); got != want {
		t.Errorf("%d removals, want %d:\n%s", got, want, strings.Join(p.Removals, "\n"))
	}
}

// k3s's group takes kube-router's chain and the jump into it too, and
// says whose they were; RKE2's plan of the same rules names no owner.
func TestComputeGroupK3s(t *testing.T) {
	rs := renderedWith(t, "KUBE-ROUTER-INPUT", "cali-INPUT")
	rke2, k3s := Compute(rs), ComputeGroup(rs, ownership.K3s)
	if got, want := len(k3s.Removals), len(rke2.Removals)+2; got != want {
		t.Errorf("k3s: %d removals, want RKE2's %d and kube-router's chain and jump", got, len(rke2.Removals))
	}
	check.Says(t, "k3s's plan", strings.Join(k3s.Removals, "\n")+"\n", "ipv4 filter rule: -A INPUT -j KUBE-ROUTER-INPUT (kube-router)\n", "ipv4 filter chain KUBE-ROUTER-INPUT (kube-router)\n", "ipv4 nat chain KUBE-SERVICES\n")
	check.Says(t, "k3s's ipv4 script", k3s.Scripts[rules.IPv4], ":KUBE-ROUTER-INPUT - [0:0]\n", "-D INPUT -j KUBE-ROUTER-INPUT\n", "-X KUBE-ROUTER-INPUT\n")
	if strings.Contains(k3s.Scripts[rules.IPv4], "cali-INPUT") || strings.Contains(strings.Join(rke2.Removals, "\n"), " (kube-") {
		t.Errorf("k3s's plan takes Felix's chain, or RKE2's names an owner:\n%s\n%s", k3s.Scripts[rules.IPv4], strings.Join(rke2.Removals, "\n"))
	}
	if want := []ownership.Owner{ownership.KubeProxy, "kube-router"}; !slices.Equal(k3s.Owners, want) {
		t.Errorf("k3s's plan owners %v, want %v", k3s.Owners, want)
	}
}

func TestComputeNFTables(t *testing.T) {
	rs := &rules.Ruleset{Backend: backend.NFTables, Tables: []rules.Table{
		{Family: rules.IPv4, Name: "kube-proxy"}, {Family: rules.IPv4, Name: "filter"}, {Family: rules.IPv6, Name: "kube-proxy"},
	}}
	p := Compute(rs)
	if p.Scripts[rules.IPv4] != "delete table ip kube-proxy\n" || p.Scripts[rules.IPv6] != "delete table ip6 kube-proxy\n" || len(p.Removals) != 2 {
		t.Errorf("plan %+v", p)
	}
	if !Compute(&rules.Ruleset{Backend: backend.IptablesNFT}).Empty() {
		t.Error("an empty ruleset gives a non-empty plan")
	}
}

// FuzzComputeNFTables feeds arbitrary table names, in the two families the
// netlink listing returns ("4 name" or "6 name"): only the tables named
// kube-proxy may ever be planned for deletion.
func FuzzComputeNFTables(f *testing.F) {
	f.Add("4 filter\n4 kube-proxy\n6 kube-proxy\n")
	f.Add("4 kube-proxy extra\n6 kube-proxy\x00\n6 kube-proxy \n")
	f.Fuzz(func(t *testing.T, list string) {
		rs := &rules.Ruleset{Backend: backend.NFTables}
		for _, line := range strings.Split(list, "\n") {
			fam, name, _ := strings.Cut(line, " ")
			family := rules.IPv4
			if fam == "6" {
				family = rules.IPv6
			}
			rs.Tables = append(rs.Tables, rules.Table{Family: family, Name: name})
		}
		for _, script := range Compute(rs).Scripts {
			for _, line := range strings.Split(strings.TrimSpace(script), "\n") {
				if line != "delete table ip kube-proxy" && line != "delete table ip6 kube-proxy" {
					t.Fatalf("plan line %q from tables %q", line, list)
				}
			}
		}
	})
}
