package expected

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"net/netip"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Synthetic services are ClusterIP services with one TCP port "p80" and two
// endpoints each, shaped the way kube-proxy writes such a service. Names and
// addresses are a pure function of the index, so the same N renders the same
// bytes everywhere.
const (
	endpointsPerService = 2
	servicePort         = 80
)

// synthService is one service port and its endpoints in one family.
type synthService struct {
	name      string // "ns1/svc1:p80", kube-proxy's ServicePortName string
	ns, svc   string
	clusterIP netip.Addr
	endpoints []netip.Addr
}

// podCIDR is the cluster CIDR kube-proxy's masquerade rules exclude.
func podCIDR(f rules.Family) string {
	if f == rules.IPv6 {
		return "fd00:10::/64"
	}
	return "10.0.0.0/8"
}

func synth(i int, f rules.Family) synthService {
	s := synthService{
		ns:  fmt.Sprintf("ns%d", i/100+1),
		svc: fmt.Sprintf("svc%d", i+1),
	}
	s.name = s.ns + "/" + s.svc + ":p80"
	n := i + 1
	if f == rules.IPv6 {
		s.clusterIP = netip.AddrFrom16([16]byte{0xfd, 0, 0, 0x30, 14: byte(n >> 8), 15: byte(n)})
	} else {
		s.clusterIP = netip.AddrFrom4([4]byte{172, 30, byte(n >> 8), byte(n)})
	}
	for k := 0; k < endpointsPerService; k++ {
		e := i*endpointsPerService + k + 1
		if f == rules.IPv6 {
			s.endpoints = append(s.endpoints, netip.AddrFrom16([16]byte{0xfd, 0, 0, 0x10, 13: byte(e >> 16), 14: byte(e >> 8), 15: byte(e)}))
		} else {
			s.endpoints = append(s.endpoints, netip.AddrFrom4([4]byte{10, byte(128 + e>>16), byte(e >> 8), byte(e)}))
		}
	}
	return s
}

// hostPort is kube-proxy's endpoint string (net.JoinHostPort).
func hostPort(a netip.Addr) string { return netip.AddrPortFrom(a, servicePort).String() }

// hashPrefix is kube-proxy's chain-name hash: base32 of sha256, truncated.
func hashPrefix(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	return base32.StdEncoding.EncodeToString(sum[:])[:n]
}

// IptablesServiceChain and IptablesEndpointChain are kube-proxy's
// KUBE-SVC-/KUBE-SEP- names (portProtoHash, servicePortEndpointChainName).
func IptablesServiceChain(servicePortName, proto string) string {
	return vocab.PrefixService + hashPrefix(servicePortName+proto, 16)
}

func IptablesEndpointChain(servicePortName, proto, endpoint string) string {
	return vocab.PrefixEndpoint + hashPrefix(servicePortName+proto+endpoint, 16)
}

// NFTablesChainBase is kube-proxy's nftables per-service chain suffix
// (servicePortChainNameBase: "HASH8-ns/name/proto/port").
func NFTablesChainBase(ns, svc, proto, port string) string {
	name := ns + "/" + svc + "/" + proto + "/" + port
	return hashPrefix(name, 8) + "-" + name
}

// NFTablesEndpointChainBase is the endpoint variant; the endpoint's last ':'
// becomes '/', and an IPv6 address loses its brackets and has its colons
// replaced, since nft chain names do not allow ':'.
func NFTablesEndpointChainBase(ns, svc, proto, port, endpoint string) string {
	ap, err := netip.ParseAddrPort(endpoint)
	ep := endpoint
	if err == nil {
		ep = strings.ReplaceAll(ap.Addr().String(), ":", ".") + fmt.Sprintf("/%d", ap.Port())
	}
	name := ns + "/" + svc + "/" + proto + "/" + port + "__" + ep
	return hashPrefix(name, 8) + "-" + name
}

func prefixLen(f rules.Family) string {
	if f == rules.IPv6 {
		return "/128"
	}
	return "/32"
}

// addIptablesServices adds n services to the nat table, before the final
// KUBE-NODEPORTS jump of KUBE-SERVICES.
func addIptablesServices(tables []rules.Table, f rules.Family, n int) {
	if n == 0 {
		return
	}
	var nat *rules.Table
	for i := range tables {
		if tables[i].Name == "nat" {
			nat = &tables[i]
		}
	}
	var svcRules []rules.Rule
	var chains []rules.Chain
	for i := 0; i < n; i++ {
		s := synth(i, f)
		svcChain := IptablesServiceChain(s.name, "tcp")
		dst := fmt.Sprintf("-d %s%s -p tcp", s.clusterIP, prefixLen(f))
		cipComment := s.name + " cluster IP"
		svcRules = append(svcRules, rules.Rule{
			Text:    fmt.Sprintf("%s -m comment --comment %s -m tcp --dport %d -j %s", dst, vocab.Quote(cipComment), servicePort, svcChain),
			Comment: cipComment, Jump: svcChain,
		})
		sc := rules.Chain{Name: svcChain, Rules: []rules.Rule{{
			Text:    fmt.Sprintf("! -s %s %s -m comment --comment %s -m tcp --dport %d -j KUBE-MARK-MASQ", podCIDR(f), dst, vocab.Quote(cipComment), servicePort),
			Comment: cipComment, Jump: vocab.ChainMarkMasq,
		}}}
		for k, ep := range s.endpoints {
			hp := hostPort(ep)
			sepChain := IptablesEndpointChain(s.name, "tcp", hp)
			c := s.name + " -> " + hp
			stat := ""
			if left := len(s.endpoints) - k; left > 1 {
				stat = fmt.Sprintf(" -m statistic --mode random --probability %0.11f", 1.0/float64(left))
			}
			sc.Rules = append(sc.Rules, rules.Rule{
				Text:    fmt.Sprintf("-m comment --comment %s%s -j %s", vocab.Quote(c), stat, sepChain),
				Comment: c, Jump: sepChain,
			})
			chains = append(chains, rules.Chain{Name: sepChain, Rules: []rules.Rule{
				{Text: fmt.Sprintf("-s %s%s -m comment --comment %s -j KUBE-MARK-MASQ", ep, prefixLen(f), vocab.Quote(s.name)), Comment: s.name, Jump: vocab.ChainMarkMasq},
				{Text: fmt.Sprintf("-p tcp -m comment --comment %s -m tcp -j DNAT --to-destination %s", vocab.Quote(s.name), hp), Comment: s.name},
			}})
		}
		chains = append(chains, sc)
	}
	for ci := range nat.Chains {
		c := &nat.Chains[ci]
		if c.Name == vocab.ChainServices {
			c.Rules = append(svcRules, c.Rules...)
		}
	}
	nat.Chains = append(nat.Chains, chains...)
}

// addNFTablesServices adds n services to kube-proxy's nftables table:
// service and endpoint chains, cluster-ips and service-ips elements.
func addNFTablesServices(t *rules.Table, f rules.Family, n int, numgenDNAT bool) {
	addr, _ := nftFamily(f)
	set := map[string]*rules.Set{}
	for i := range t.Sets {
		set[t.Sets[i].Name] = &t.Sets[i]
	}
	for i := 0; i < n; i++ {
		s := synth(i, f)
		svcChain := "service-" + NFTablesChainBase(s.ns, s.svc, "tcp", "p80")
		if numgenDNAT {
			// 1.36+: no endpoint chains without session affinity; one
			// DNAT through a numgen map of address . port.
			var m []string
			for k, ep := range s.endpoints {
				m = append(m, fmt.Sprintf("%d : %s . %d", k, ep, servicePort))
			}
			t.Chains = append(t.Chains, rules.Chain{Name: svcChain, Rules: []rules.Rule{{
				Text: fmt.Sprintf("meta l4proto tcp dnat %s to numgen random mod %d map { %s }", addr, len(s.endpoints), strings.Join(m, ", ")),
			}}})
			addNFTablesElements(set, s, svcChain)
			continue
		}
		sc := rules.Chain{Name: svcChain, Rules: []rules.Rule{{
			Text: fmt.Sprintf("%s daddr %s %s saddr != %s jump mark-for-masquerade", addr, s.clusterIP, addr, podCIDR(f)),
			Jump: "mark-for-masquerade",
		}}}
		var vmap []string
		var epChains []rules.Chain
		for k, ep := range s.endpoints {
			hp := hostPort(ep)
			epChain := "endpoint-" + NFTablesEndpointChainBase(s.ns, s.svc, "tcp", "p80", hp)
			vmap = append(vmap, fmt.Sprintf("%d : goto %s", k, epChain))
			epChains = append(epChains, rules.Chain{Name: epChain, Rules: []rules.Rule{
				{Text: fmt.Sprintf("%s saddr %s jump mark-for-masquerade", addr, ep), Jump: "mark-for-masquerade"},
				{Text: fmt.Sprintf("meta l4proto tcp dnat to %s", hp)},
			}})
		}
		// ", " between elements, as nft list ruleset (and the nftables
		// reader) prints an anonymous map; kube-proxy's own " , " loads the same.
		sc.Rules = append(sc.Rules, rules.Rule{
			Text: fmt.Sprintf("numgen random mod %d vmap { %s }", len(s.endpoints), strings.Join(vmap, ", ")),
		})
		t.Chains = append(t.Chains, sc)
		t.Chains = append(t.Chains, epChains...)
		addNFTablesElements(set, s, svcChain)
	}
}

func addNFTablesElements(set map[string]*rules.Set, s synthService, svcChain string) {
	set["cluster-ips"].Elements = append(set["cluster-ips"].Elements, s.clusterIP.String())
	set["service-ips"].Elements = append(set["service-ips"].Elements,
		fmt.Sprintf("%s . tcp . %d : goto %s", s.clusterIP, servicePort, svcChain))
}
