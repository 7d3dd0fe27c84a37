package verify

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// The chains of three Services as kube-proxy 1.36 writes them: a ClusterIP
// (ns/a), a LoadBalancer with externalTrafficPolicy Local and source ranges
// (ns/b: ClusterIP to service-, LB IP and NodePort to external-, which goes
// to local- and short-circuits to service-; firewall-ips to firewall-), one
// with session affinity (ns/c: endpoint chains behind affinity gotos and an
// anonymous vmap), and a stale chain kube-proxy flushed (ns/gone).
const (
	svcA   = "service-AAAAAAAA-ns/a/tcp/http"
	svcB   = "service-BBBBBBBB-ns/b/tcp/http"
	extB   = "external-BBBBBBBB-ns/b/tcp/http"
	localB = "local-BBBBBBBB-ns/b/tcp/http"
	fwB    = "firewall-BBBBBBBB-ns/b/tcp/http"
	svcC   = "service-CCCCCCCC-ns/c/udp/dns"
	epC1   = "endpoint-DDDDDDDD-ns/c/udp/dns__10.1.0.5/53"
	epC2   = "endpoint-EEEEEEEE-ns/c/udp/dns__10.1.0.6/53"
	stale  = "service-FFFFFFFF-ns/gone/tcp/http"
)

func dispatchTable() rules.Table {
	chain := func(name string, jumps ...string) rules.Chain {
		c := rules.Chain{Name: name, Rules: []rules.Rule{{Text: "meta l4proto tcp dnat to 10.1.0.1:80"}}}
		for _, j := range jumps {
			c.Rules = append(c.Rules, rules.Rule{Text: "goto " + j, Jump: j})
		}
		return c
	}
	return rules.Table{Family: rules.IPv4, Name: "kube-proxy", Chains: []rules.Chain{
		{Name: "nat-prerouting", Hook: "prerouting", Type: "nat", Priority: -100, Rules: []rules.Rule{{Text: "jump services", Jump: "services"}}},
		{Name: "services", Rules: []rules.Rule{{Text: "ip daddr . meta l4proto . th dport vmap @service-ips"}}},
		{Name: "reject-chain", Rules: []rules.Rule{{Text: "reject"}}},
		chain(svcA), chain(svcB), chain(extB, svcB, localB), chain(localB), chain(fwB),
		chain(svcC, epC1, epC2), chain(epC1), chain(epC2),
		{Name: stale},
	}, Sets: []rules.Set{
		{Name: "service-ips", Map: true, Elements: []string{
			"10.96.0.10 . tcp . 80 : goto " + svcA,
			"10.96.0.11 . tcp . 80 : goto " + svcB,
			"172.16.0.2 . tcp . 80 : goto " + extB,
			"10.96.0.12 . udp . 53 : goto " + svcC,
		}},
		{Name: "service-nodeports", Map: true, Elements: []string{"tcp . 30001 : goto " + extB}},
		{Name: "firewall-ips", Map: true, Elements: []string{"172.16.0.2 . tcp . 80 : goto " + fwB}},
		{Name: "no-endpoint-services", Map: true, Elements: []string{`10.96.0.13 . tcp . 80 comment "ns/e:http" : goto reject-chain`}},
	}}
}

// without returns t without the map elements that contain any of cut.
func without(t rules.Table, cut ...string) rules.Table {
	t.Sets = slices.Clone(t.Sets)
	for i := range t.Sets {
		t.Sets[i].Elements = slices.DeleteFunc(slices.Clone(t.Sets[i].Elements), func(e string) bool {
			return slices.ContainsFunc(cut, func(c string) bool { return strings.Contains(e, c) })
		})
	}
	return t
}

func TestUnreachedServiceChains(t *testing.T) {
	for _, tc := range []struct {
		name string
		cut  []string
		want []string
	}{
		{"as kube-proxy writes it", nil, nil},
		{"a ClusterIP element deleted", []string{"10.96.0.10 "}, []string{svcA}},
		// external- is still reached from the NodePort: the LB IP alone
		// is not a chain no dispatch reaches.
		{"the LoadBalancer IP element deleted", []string{"172.16.0.2 . tcp . 80 : goto external"}, nil},
		{"LoadBalancer IP and NodePort elements deleted", []string{"172.16.0.2 . tcp . 80 : goto external", "tcp . 30001 "}, []string{extB, localB}},
		{"the firewall element deleted", []string{"goto firewall-"}, []string{fwB}},
		// endpoint chains follow their service chain; they are not judged.
		{"a session-affinity Service's element deleted", []string{"10.96.0.12 "}, []string{svcC}},
		{"every element deleted", []string{" : "}, []string{extB, fwB, localB, svcA, svcB, svcC}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := unreachedServiceChains(without(dispatchTable(), tc.cut...))
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("unreached chains %q, want %q", got, want)
			}
		})
	}
}

func TestServiceOfChain(t *testing.T) {
	for chain, want := range map[string]string{
		svcA:                             "Service ns/a port http/tcp",
		extB:                             "Service ns/b port http/tcp",
		epC1:                             "Service ns/c port dns/udp, endpoint 10.1.0.5/53",
		"service-XXXXXXXX-truncated/...": "Service truncated/...",
	} {
		if got := serviceOfChain(chain); got != want {
			t.Errorf("serviceOfChain(%q) = %q, want %q", chain, got, want)
		}
	}
}

// Through verify's own read options (newFake): the dispatch maps' elements
// and the per-Service chains' jumps are what verify reads, and a deleted
// element fails the node naming the Service, once per family.
func TestRunFindsUndispatchedService(t *testing.T) {
	healthy := skeleton(t, backend.NFTables, minor(36), 0)
	for i := range healthy.Tables {
		lt := &healthy.Tables[i]
		d := dispatchTable()
		for _, c := range d.Chains {
			if lt.Chain(c.Name) == nil {
				lt.Chains = append(lt.Chains, c)
			}
		}
		for _, s := range d.Sets {
			for j := range lt.Sets {
				if lt.Sets[j].Name == s.Name {
					lt.Sets[j].Elements = s.Elements
				}
			}
		}
	}
	opts := Options{Expect: backend.NFTables, Kubernetes: minor(36), Reader: newFake(t, healthy)}
	if res := run(t, opts); !res.OK {
		t.Fatalf("verify of kube-proxy's Services as it writes them: %s", kinds(res))
	}
	broken := rules.Clone(healthy)
	for i := range broken.Tables {
		broken.Tables[i] = without(broken.Tables[i], "10.96.0.10 ")
	}
	opts.Reader = newFake(t, broken)
	res := run(t, opts)
	var found []Finding
	for _, f := range res.Findings {
		if f.Kind == KindUndispatched {
			found = append(found, f)
		}
	}
	if res.OK || len(found) != 2 {
		t.Fatalf("verify after deleting ns/a's service-ips element: %s, want one %s finding per family", kinds(res), KindUndispatched)
	}
	for _, f := range found {
		for _, want := range []string{svcA, "Service ns/a port http/tcp", "not dispatched", "restart"} {
			if !strings.Contains(f.Message+f.Fix, want) {
				t.Errorf("finding %q / fix %q does not say %q", f.Message, f.Fix, want)
			}
		}
	}
}
