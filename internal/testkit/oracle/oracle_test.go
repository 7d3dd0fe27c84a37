package oracle

import (
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// TestProgramWritesKubeProxyRules runs the oracle for every minor, backend
// and a small and a large cluster, and checks in the kernel, with the
// backend's own dump tool, that kube-proxy's tables and dispatch are there,
// that every Service fed to a family's proxier is in that family's rules,
// and that nothing landed in another backend.
func TestProgramWritesKubeProxyRules(t *testing.T) {
	eachCell(t, Options{IPv6: true, Kubelet: true}, func(t *testing.T, minor string, b backend.Backend, o Options) {
		for _, n := range []int{10, 2000} {
			t.Run(fmt.Sprint(n), func(t *testing.T) {
				if !nstest.InNetns(t) {
					return
				}
				o.Services = n
				checkFootprint(t, minor, b, o, Program(t, minor, b, o))
			})
		}
	})
}

// eachCell runs cell as subtest MINOR/BACKEND for every minor and backend
// whose oracle can run o (Fit), and says in the test output which cells it
// leaves out, or runs without kubelet's chains, and why. cell enters its
// own netns (nstest.InNetns), once per oracle run.
func eachCell(t *testing.T, o Options, cell func(t *testing.T, minor string, b backend.Backend, o Options)) {
	for _, minor := range Minors {
		for _, b := range backend.All {
			fit, notes, ok := Fit(minor, b, o)
			for _, n := range notes {
				t.Logf("%s/%s: %s", minor, b, n)
			}
			if ok {
				t.Run(minor+"/"+string(b), func(t *testing.T) { cell(t, minor, b, fit) })
			}
		}
	}
}

// TestProgramSingleStack: without IPv6 kube-proxy runs one IPv4 proxier and
// writes nothing for IPv6.
func TestProgramSingleStack(t *testing.T) {
	eachCell(t, Options{Services: 10, Kubelet: true}, func(t *testing.T, minor string, b backend.Backend, o Options) {
		if !nstest.InNetns(t) {
			return
		}
		r := Program(t, minor, b, o)
		if len(r.Services["IPv6"]) != 0 || len(r.Services["IPv4"]) != 10 {
			t.Fatalf("single-stack oracle fed %d IPv4 and %d IPv6 services, want 10 and 0", len(r.Services["IPv4"]), len(r.Services["IPv6"]))
		}
		checkFootprint(t, minor, b, o, r)
		ipv6 := run(t, "ip6tables-legacy-save") + run(t, "ip6tables-nft-save") + run(t, "nft", "list", "tables")
		if strings.Contains(ipv6, "KUBE-") || strings.Contains(ipv6, "ip6 kube-proxy") {
			t.Errorf("single-stack kube-proxy (or kubelet) wrote IPv6 rules:\n%s", ipv6)
		}
	})
}

func checkFootprint(t *testing.T, minor string, b backend.Backend, o Options, r Result) {
	t.Helper()
	for family, services := range r.Services {
		dump := dumpFamily(t, b, family)
		for _, want := range append(fixedObjects(b, family, o.Kubelet), sinceMinor(minor, b, family)...) {
			if !want.MatchString(dump) {
				t.Errorf("%s %s: no match for %s in\n%s", b, family, want, head(dump))
			}
		}
		// kube-proxy names a service port namespace/name:port in iptables
		// comments and namespace/name/proto/port in nftables chain names
		// and element comments.
		inRules := map[string]bool{}
		for _, m := range serviceName.FindAllStringSubmatch(dump, -1) {
			inRules[m[1]] = true
		}
		for _, svc := range services {
			if !inRules[svc] {
				t.Errorf("%s %s: service %s is not in the rules", b, family, svc)
			}
		}
		if b != backend.NFTables {
			// Nothing of kube-proxy's or kubelet's in the other flavour.
			if other := dumpFamily(t, otherFlavour(b), family); strings.Contains(other, "KUBE-") {
				t.Errorf("%s %s: kube chains stranded in %s:\n%s", b, family, otherFlavour(b), head(other))
			}
		}
	}
}

var serviceName = regexp.MustCompile(`(oracle/svc-[0-9]+)[:/]`)

// fixedObjects are the objects every known minor's proxier writes for a
// family, whatever its Services, plus kubelet's chains.
func fixedObjects(b backend.Backend, family string, kubelet bool) []*regexp.Regexp {
	var res []string
	if b == backend.NFTables {
		res = []string{
			`(?m)^\s+chain services \{`,
			`(?m)^\s+map service-ips \{`, `(?m)^\s+map service-nodeports \{`,
			`vmap @service-ips`, `vmap @service-nodeports`,
			// nft prints the output hook's dstnat priority as a number.
			`type nat hook prerouting priority dstnat;`, `type nat hook output priority -100;`,
			`type nat hook postrouting priority srcnat;`,
		}
	} else {
		res = []string{
			`(?m)^-A PREROUTING .*-j KUBE-SERVICES$`, `(?m)^-A OUTPUT .*-j KUBE-SERVICES$`,
			`(?m)^-A POSTROUTING .*-j KUBE-POSTROUTING$`, `(?m)^-A KUBE-SERVICES .*-j KUBE-NODEPORTS$`,
			`(?m)^:KUBE-MARK-MASQ `, `(?m)^:KUBE-FORWARD `, `(?m)^:KUBE-PROXY-FIREWALL `,
			`(?m)^:KUBE-EXTERNAL-SERVICES `, `(?m)^:KUBE-PROXY-CANARY `,
			`(?m)^-A KUBE-SVC-`, `(?m)^-A KUBE-SEP-`,
		}
	}
	// kubelet's chains, in the iptables flavour of the backend.
	if kubelet {
		res = append(res, inTable("mangle", `:KUBE-IPTABLES-HINT `))
		for _, table := range []string{"mangle", "nat", "filter"} {
			res = append(res, inTable(table, `:KUBE-KUBELET-CANARY `))
		}
	}
	if kubelet && family == "IPv4" {
		res = append(res, `(?m)^-A KUBE-FIREWALL .*block incoming localnet connections`)
	}
	out := make([]*regexp.Regexp, len(res))
	for i, re := range res {
		out[i] = regexp.MustCompile(re)
	}
	return out
}

// sinceMinor are the fixed objects only some minors write: 1.38's
// localhost NodePort rejects (KubeProxyNFTablesLocalhostNodePorts, on by
// default from 1.38) in nftables mode.
func sinceMinor(minor string, b backend.Backend, family string) []*regexp.Regexp {
	if b != backend.NFTables || minor < "v1.38" {
		return nil
	}
	match := map[string]string{"IPv4": "ip daddr 127.0.0.0/8", "IPv6": "ip6 daddr ::1"}[family]
	res := []string{
		`(?m)^\s+map localhost-nodeport-reject-ports \{\n\s+type inet_proto \. inet_service : verdict\n\s+comment "localhost NodePorts rejected by kube-proxy"`,
		`(?m)^\s+` + regexp.QuoteMeta(match+" meta l4proto . th dport vmap @localhost-nodeport-reject-ports") + `$`,
	}
	for _, p := range []string{"tcp", "udp", "sctp"} {
		res = append(res,
			`(?m)^\s+counter localhost-nodeport-rejected-`+p+` \{`,
			`(?m)^\s+chain localhost-nodeport-reject-`+p+` \{\n\s+counter name "localhost-nodeport-rejected-`+p+`" reject\n\s+\}`)
	}
	out := make([]*regexp.Regexp, len(res))
	for i, re := range res {
		out[i] = regexp.MustCompile(re)
	}
	return out
}

// inTable matches line at the start of a line in an iptables-save table
// section (which runs from "*table" to the next "*").
func inTable(table, line string) string {
	return `(?ms)^\*` + table + `$[^*]*^` + regexp.QuoteMeta(line)
}

// dumpFamily is one family's rules as the backend's own tool prints them:
// iptables-{legacy,nft}-save, or for nftables the nft ruleset of that
// family's tables plus the iptables-nft tables (where kubelet's chains are).
func dumpFamily(t *testing.T, b backend.Backend, family string) string {
	t.Helper()
	v := map[string]string{"IPv4": "iptables", "IPv6": "ip6tables"}[family]
	switch b {
	case backend.IptablesLegacy:
		return run(t, v+"-legacy-save")
	case backend.IptablesNFT:
		return run(t, v+"-nft-save")
	}
	nftFamily := map[string]string{"IPv4": "ip", "IPv6": "ip6"}[family]
	return run(t, "nft", "list", "table", nftFamily, "kube-proxy") + run(t, v+"-nft-save")
}

func otherFlavour(b backend.Backend) backend.Backend {
	if b == backend.IptablesLegacy {
		return backend.IptablesNFT
	}
	return backend.IptablesLegacy
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func head(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "\n..."
	}
	return s
}

func TestInTable(t *testing.T) {
	dump := "*mangle\n:PREROUTING ACCEPT [0:0]\n:KUBE-IPTABLES-HINT - [0:0]\nCOMMIT\n*nat\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n"
	for _, c := range []struct {
		table, line string
		want        bool
	}{
		{"mangle", ":KUBE-IPTABLES-HINT ", true},
		{"nat", ":KUBE-KUBELET-CANARY ", true},
		{"nat", ":KUBE-IPTABLES-HINT ", false},
		{"mangle", ":KUBE-KUBELET-CANARY ", false},
		{"filter", ":KUBE-KUBELET-CANARY ", false},
	} {
		if got := regexp.MustCompile(inTable(c.table, c.line)).MatchString(dump); got != c.want {
			t.Errorf("inTable(%s, %q) matched %t, want %t", c.table, c.line, got, c.want)
		}
	}
}
