package verify_test

// ipvs mode in the oracle matrix: kube-proxy's real ipvs proxier programs
// the iptables flavour of each iptables backend and the real ipsets in a
// throwaway namespace; this kernel lacks IPVS and dummy links, so the
// virtual servers, kube-ipvs0 and net.ipv4.vs.conntrack verify judges are
// what kube-proxy's own fakes held (the test log says so). verify is
// judged on those, and its ipvs model against them both ways.

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipset"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
	"golang.org/x/sys/unix"
)

func TestOracleIPVS(t *testing.T) {
	for _, minor := range oracle.Minors {
		for _, b := range backend.All {
			o, notes, ok := oracle.Fit(minor, b, oracle.Options{Services: 16, IPv6: true, Kubelet: true, IPVS: true})
			for _, n := range notes {
				t.Logf("%s/%s: %s", minor, b, n)
			}
			if !ok {
				continue
			}
			t.Run(minor+"/"+string(b), func(t *testing.T) {
				if !nstest.InNetns(t) {
					return
				}
				runIPVSCell(t, minor, b, o)
			})
		}
	}
}

func runIPVSCell(t *testing.T, minor string, b backend.Backend, o oracle.Options) {
	kv, err := rke2.ParseVersion(minor)
	if err != nil {
		t.Fatal(err)
	}
	tools(t, b)
	nstest.Tool(t, "ipset")
	r := oracle.Program(t, minor, b, o)
	read := withFakes(t, r.IPVS)
	run := func() *verify.Result {
		t.Helper()
		res, err := verify.Run(context.Background(), verify.Options{Expect: b, ExpectSource: "--expect", Kubernetes: kv,
			Families: bothFamilies, Reader: verify.NewReader(hostfs.New("/")), ProxyMode: verify.ProxyModeIPVS, IPVS: read})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	t.Run("healthy", func(t *testing.T) {
		if res := run(); !res.OK || len(res.Notes) != 0 {
			t.Errorf("verify of kube-proxy %s's healthy ipvs mode on %s: want ok, no notes:\n%s", minor, b, report(res))
		}
	})
	t.Run("model agrees with the proxier", func(t *testing.T) {
		want, err := expected.RenderIPVS(expected.Options{Backend: b, Families: bothFamilies})
		if err != nil {
			t.Fatal(err)
		}
		live, err := netfilter.NewSystem(hostfs.New("/")).Read(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range modelDisagreements(want, live) {
			t.Errorf("kube-proxy %s ipvs, %s: %s", minor, b, d)
		}
		for _, d := range ipsetDisagreements(t) {
			t.Errorf("kube-proxy %s ipvs: %s", minor, d)
		}
	})
	t.Run("broken: an ipvs chain stranded in the other flavour", func(t *testing.T) {
		other := otherFlavour(b)
		ipt, _ := iptablesCmds(other)
		nstest.Sh(t, ipt+" -t filter -N KUBE-IPVS-FILTER; "+ipt+` -t filter -A INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER`)
		defer nstest.Sh(t, ipt+` -t filter -D INPUT -m comment --comment "kubernetes ipvs access filter" -j KUBE-IPVS-FILTER; `+ipt+" -t filter -X KUBE-IPVS-FILTER")
		res := run()
		if res.OK || !hasFinding(res, verify.KindStranded, other, "") {
			t.Errorf("want a %s finding for %s:\n%s", verify.KindStranded, other, report(res))
		}
	})
	t.Run("broken: an address taken out of KUBE-IPVS-IPS", func(t *testing.T) {
		addr := r.IPVS.KubeIPVS0["IPv4"][0]
		nstest.Sh(t, "ipset del KUBE-IPVS-IPS "+addr)
		defer nstest.Sh(t, "ipset add KUBE-IPVS-IPS "+addr)
		res := run()
		if res.OK || !hasFinding(res, verify.KindIPVSMissingSets, b, "ipv4") || !strings.Contains(report(res), "KUBE-IPVS-IPS") {
			t.Errorf("after ipset del KUBE-IPVS-IPS %s: want a %s finding naming the set:\n%s", addr, verify.KindIPVSMissingSets, report(res))
		}
	})
	// Last: the set cannot be made again as kube-proxy made it.
	t.Run("broken: a KUBE-* ipset is missing", func(t *testing.T) {
		name := unreferencedKubeSet(t)
		nstest.Sh(t, "ipset destroy "+name)
		res := run()
		if res.OK || !hasFinding(res, verify.KindIPVSMissingSets, b, "") || !strings.Contains(report(res), name) {
			t.Errorf("after ipset destroy %s: want a %s finding naming it:\n%s", name, verify.KindIPVSMissingSets, report(res))
		}
	})
}

// TestOracleIPVSLeftoversAfterMove: kube-proxy's real ipvs proxier made
// its ipsets; the node moved to nftables (the ipvs chains gone, as
// kube-proxy's cleanup removes them, but the sets left, as on RKE2 where
// that cleanup returns early) and kube-proxy's real nftables proxier
// programmed the node. verify then fails with one finding naming the
// leftover sets, the one a sweep acts on. kube-ipvs0 and the virtual
// servers were kube-proxy's fakes here, so only the sets are in the kernel.
func TestOracleIPVSLeftoversAfterMove(t *testing.T) {
	for _, minor := range oracle.Minors {
		from, notes, ok := oracle.Fit(minor, backend.IptablesNFT, oracle.Options{Services: 16, IPv6: true, IPVS: true})
		for _, n := range notes {
			t.Logf("%s: %s", minor, n)
		}
		if !ok {
			continue
		}
		t.Run(minor, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			tools(t, backend.NFTables)
			nstest.Tool(t, "ipset")
			oracle.Program(t, minor, backend.IptablesNFT, from)
			nstest.Sh(t, "for t in nat filter; do for c in iptables-nft ip6tables-nft; do $c -w -t $t -F; $c -w -t $t -X; done; done")
			oracle.Program(t, minor, backend.NFTables, oracle.Options{Services: 16, IPv6: true})
			opts := verify.Options{IPVS: ipvs.ReadFootprint}
			res, err := verify.Run(context.Background(), verify.Options{Expect: backend.NFTables, ExpectSource: "--expect",
				Families: bothFamilies, Reader: verify.NewReader(hostfs.New("/"))})
			if err != nil {
				t.Fatal(err)
			}
			verify.AddIPVSLeftovers(opts, res)
			text := report(res)
			if res.OK || !hasFinding(res, verify.KindIPVSLeftoverSets, backend.NFTables, "") {
				t.Fatalf("nftables rules plus ipvs mode's leftover ipsets: want a %s finding:\n%s", verify.KindIPVSLeftoverSets, text)
			}
			for _, name := range []string{"KUBE-CLUSTER-IP", "KUBE-6-CLUSTER-IP", "KUBE-LOOP-BACK", "KUBE-NODE-PORT-TCP"} {
				if !strings.Contains(text, name) {
					t.Errorf("the leftover finding does not name %s:\n%s", name, text)
				}
			}
			for _, f := range res.Findings {
				if f.Kind != verify.KindIPVSLeftoverSets {
					t.Errorf("kube-proxy's nftables rules are complete, yet: [%s] %s", f.Kind, f.Message)
				}
			}
		})
	}
}

// withFakes is the footprint reader of an oracle namespace: the ipsets
// from the kernel, and kube-ipvs0, the virtual servers and the vs sysctl
// from what kube-proxy's fakes held, since this kernel has none of them.
func withFakes(t *testing.T, st *oracle.IPVSState) func() ipvs.Footprint {
	t.Helper()
	link := ipvs.Link{Name: vocab.IPVSDummyLink, Kind: "dummy"}
	for _, fam := range []string{"IPv4", "IPv6"} {
		for _, a := range st.KubeIPVS0[fam] {
			link.Addrs = append(link.Addrs, netip.MustParseAddr(a))
		}
	}
	services := ipvs.Services{Present: true}
	for _, v := range st.VirtualServers {
		services.List = append(services.List, ipvs.Service{Addr: netip.MustParseAddr(v.Address), Port: v.Port, Protocol: ipProto[v.Protocol]})
	}
	t.Logf("read through kube-proxy's fakes (%s): kube-ipvs0 with %d addresses, %d virtual servers, net.ipv4.vs.conntrack=%d; read from the kernel: ipsets, iptables",
		st.Faked, len(link.Addrs), len(services.List), st.Sysctls["net/ipv4/vs/conntrack"])
	return func() ipvs.Footprint {
		f := ipvs.ReadFootprint()
		f.Link, f.LinkFound, f.LinkErr = link, true, nil
		f.Services, f.ServicesErr = services, nil
		f.Conntrack, f.ConntrackErr = fmt.Sprint(st.Sysctls["net/ipv4/vs/conntrack"]), nil
		return f
	}
}

// ipProto is kube-proxy's protocol name as the IPVS reader decodes it.
var ipProto = map[string]uint16{"TCP": unix.IPPROTO_TCP, "UDP": unix.IPPROTO_UDP, "SCTP": unix.IPPROTO_SCTP}

// ipsetDisagreements compares the kernel's KUBE-* sets with the model's
// IPVSSets, both ways.
func ipsetDisagreements(t *testing.T) []string {
	t.Helper()
	sets, err := ipset.List()
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]bool{}
	for _, f := range bothFamilies {
		for _, n := range expected.IPVSSets(f) {
			model[n] = true
		}
	}
	var out []string
	live := map[string]bool{}
	for _, s := range sets {
		live[s.Name] = true
		if strings.HasPrefix(s.Name, "KUBE-") && !model[s.Name] {
			out = append(out, "kube-proxy made ipset "+s.Name+", the model lacks it")
		}
	}
	for n := range model {
		if !live[n] {
			out = append(out, "the model requires ipset "+n+", kube-proxy did not make it")
		}
	}
	return out
}

func unreferencedKubeSet(t *testing.T) string {
	t.Helper()
	sets, err := ipset.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		if vocab.IsKubeProxyIPSet(s.Name) && s.References == 0 {
			return s.Name
		}
	}
	t.Fatalf("every kube-proxy ipset is referenced by a rule: %+v", sets)
	return ""
}

func otherFlavour(b backend.Backend) backend.Backend {
	if b == backend.IptablesLegacy {
		return backend.IptablesNFT
	}
	return backend.IptablesLegacy
}
