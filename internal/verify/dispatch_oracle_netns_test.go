package verify_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// undispatch is one deletion of dispatch map elements behind kube-proxy's
// back: in family fam's table, the elements of each of maps whose chain
// holds svc's name and part, and the chains verify must then name.
type undispatch struct {
	name   string
	fam    rules.Family
	maps   []string
	svc    string // "svc-00002/" (the oracle's Service i)
	part   string // "" or a chain name part the element's chain holds ("external-", "/udp/")
	chains func(deleted []string) []string
}

// The oracle's Services cycle through kinds (test/kubeproxy/services.go):
// 0 ClusterIP, 1 NodePort (tcp and udp ports), 2 LoadBalancer with
// externalTrafficPolicy Local and source ranges, 4 ClientIP affinity,
// 7 IPv6 only.
var undispatches = []undispatch{
	{name: "ClusterIP of a ClusterIP Service", fam: rules.IPv4, maps: []string{"service-ips"}, svc: "svc-00000/"},
	{name: "NodePort of a NodePort Service's udp port", fam: rules.IPv4, maps: []string{"service-nodeports"}, svc: "svc-00001/", part: "/udp/"},
	{name: "LoadBalancer IP and NodePort of an externalTrafficPolicy Local Service", fam: rules.IPv4,
		maps: []string{"service-ips", "service-nodeports"}, svc: "svc-00002/", part: "external-",
		// external- goes to local- (the node's own endpoint) and nothing else does.
		chains: func(d []string) []string { return []string{d[0], "local-" + strings.TrimPrefix(d[0], "external-")} }},
	{name: "firewall of a LoadBalancer with source ranges", fam: rules.IPv4, maps: []string{"firewall-ips"}, svc: "svc-00002/"},
	{name: "ClusterIP of a ClientIP affinity Service", fam: rules.IPv4, maps: []string{"service-ips"}, svc: "svc-00004/"},
	{name: "ClusterIP of an IPv6 Service", fam: rules.IPv6, maps: []string{"service-ips"}, svc: "svc-00007/"},
}

// TestOracleUndispatchedService: on every minor's kube-proxy nftables
// rules (10 Services of each kind the oracle makes, dual-stack), verify
// passes what kube-proxy wrote, and fails naming the Service's chain once
// a dispatch map element is deleted behind kube-proxy's back so that no
// element or jump reaches a chain any more.
func TestOracleUndispatchedService(t *testing.T) {
	for _, minor := range oracle.Minors {
		t.Run(minor, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			kv, err := rke2.ParseVersion(minor)
			if err != nil {
				t.Fatal(err)
			}
			b := backend.NFTables
			tools(t, b)
			oracle.Program(t, minor, b, oracle.Options{Services: 10, IPv6: true})
			programmed := snapshot(t, b)
			for _, k := range []rke2.KubeVersion{kv, {}} {
				if res := runVerify(t, b, k, bothFamilies); !res.OK {
					t.Errorf("verify --kubernetes %q on kube-proxy %s's rules as it wrote them:\n%s", k, minor, report(res))
				}
			}
			for _, u := range undispatches {
				t.Run(u.name, func(t *testing.T) {
					defer restore(t, b, programmed)
					deleted := deleteElements(t, u)
					want := deleted
					if u.chains != nil {
						want = u.chains(deleted)
					}
					res := runVerify(t, b, kv, bothFamilies)
					text := report(res)
					if res.OK || !hasFinding(res, verify.KindUndispatched, b, u.fam) {
						t.Fatalf("verify after deleting the elements to %q: want an %s finding for %s\n%s", deleted, verify.KindUndispatched, u.fam, text)
					}
					t.Logf("verify says:\n%s", text)
					for _, name := range append(want, "oracle/"+strings.TrimSuffix(u.svc, "/"), "restart") {
						if !strings.Contains(text, name) {
							t.Errorf("verify after deleting the elements to %q does not name %q:\n%s", deleted, name, text)
						}
					}
				})
			}
		})
	}
}

// deleteElements deletes u's elements with nft and returns the chains
// they went to (one per element, in maps' order).
func deleteElements(t *testing.T, u undispatch) []string {
	t.Helper()
	full, err := netfilter.NewSystem(hostfs.New("/")).Read(context.Background(), backend.NFTables)
	if err != nil {
		t.Fatal(err)
	}
	table := full.Table(u.fam, "kube-proxy")
	if table == nil {
		t.Fatalf("no %s kube-proxy table", u.fam)
	}
	nftFamily := map[rules.Family]string{rules.IPv4: "ip", rules.IPv6: "ip6"}[u.fam]
	var chains []string
	var script strings.Builder
	for _, m := range u.maps {
		for _, s := range table.Sets {
			if s.Name != m {
				continue
			}
			for _, e := range s.Elements {
				chain := rules.ElementJump(e)
				if !strings.Contains(chain, "/"+u.svc) || !strings.Contains(chain, u.part) {
					continue
				}
				key, _, _ := strings.Cut(e, " : ")
				key, _, _ = strings.Cut(key, " comment ")
				fmt.Fprintf(&script, "nft delete element %s kube-proxy %s '{ %s }'\n", nftFamily, m, key)
				chains = append(chains, chain)
			}
		}
	}
	if len(chains) == 0 {
		t.Fatalf("no element of %v in %s kube-proxy goes to a chain of %s%s: the oracle's Services changed", u.maps, u.fam, u.svc, u.part)
	}
	nstest.Sh(t, script.String())
	t.Logf("deleted:\n%s", script.String())
	return chains
}
