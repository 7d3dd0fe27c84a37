package live

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

func TestClassifyChains(t *testing.T) {
	for _, c := range []struct {
		legacy          bool
		table           string
		chains          []string
		kubeProxy, hint bool
	}{
		{false, "filter", []string{"INPUT", "KUBE-FIREWALL"}, false, false},
		{false, "mangle", []string{"KUBE-KUBELET-CANARY"}, false, true},
		// DetectMode reads nft's mangle only, but every legacy table
		{false, "nat", []string{"KUBE-KUBELET-CANARY"}, false, false},
		{true, "nat", []string{"KUBE-KUBELET-CANARY"}, false, true},
		{true, "filter", []string{"KUBE-SEP-ABC", "DOCKER"}, true, false},
		{false, "mangle", []string{"KUBE-IPTABLES-HINT", "KUBE-PROXY-CANARY"}, true, true},
	} {
		kp, h := classifyChains(c.legacy, c.table, c.chains)
		if kp != c.kubeProxy || h != c.hint {
			t.Errorf("legacy %v %s %q: kube-proxy %v hint %v", c.legacy, c.table, c.chains, kp, h)
		}
	}
}

// TestLiveRulesInNetns loads each backend's rules into a throwaway network
// namespace with the real tools, probes, and checks what the probe saw and
// that it created no legacy table.
func TestLiveRulesInNetns(t *testing.T) {
	derived := func(t *testing.T, name string) string {
		return filepath.Join(nstest.RefDir(t), "derived", name)
	}
	cases := []struct {
		name            string
		tools           []string
		load            func(t *testing.T) string
		kubeProxy, hint []string
	}{
		{"empty", nil, func(*testing.T) string { return "true" }, []string{}, []string{}},
		{"legacy-empty-table", []string{"iptables-legacy"}, func(*testing.T) string { return "iptables-legacy -t filter -n -L >/dev/null" }, []string{}, []string{}},
		{"iptables-legacy", []string{"iptables-legacy-restore"}, func(t *testing.T) string {
			return withoutNfacct(derived(t, "iptables-legacy-save.after-simulated-startup.txt")) + " | iptables-legacy-restore"
		}, []string{"iptables-legacy"}, []string{"iptables-legacy"}},
		{"ip6tables-legacy-hint", []string{"ip6tables-legacy"}, func(*testing.T) string {
			return "ip6tables-legacy -t mangle -N KUBE-IPTABLES-HINT && ip6tables-legacy -t nat -N KUBE-SVC-X"
		}, []string{"iptables-legacy"}, []string{"iptables-legacy"}},
		{"iptables-nft", []string{"iptables-nft-restore"}, func(t *testing.T) string {
			return withoutNfacct(derived(t, "iptables-nft-save.after-simulated-startup.txt")) + " | iptables-nft-restore"
		}, []string{"iptables-nft"}, []string{"iptables-nft"}},
		{"nftables", []string{"nft"}, func(t *testing.T) string {
			return "nft -f " + derived(t, "nftables-overall-v4.reordered.nft")
		}, []string{"nftables"}, []string{}},
		{"legacy-and-nftables", []string{"nft", "iptables-legacy"}, func(t *testing.T) string {
			return "nft -f " + derived(t, "nftables-overall-v4.reordered.nft") + " && iptables-legacy -t nat -N KUBE-SERVICES"
		}, []string{"iptables-legacy", "nftables"}, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, tool := range c.tools {
				nstest.Tool(t, tool)
			}
			load := c.load(t) // before InNetns, so a missing dump skips in the parent
			if !nstest.InNetns(t) {
				return
			}
			nstest.Sh(t, load)
			before := readProc(t, "/proc/net/ip_tables_names") + "|" + readProc(t, "/proc/net/ip6_tables_names")
			f := facts.Probe(hostfs.New("/"), facts.Options{Live: Read})
			after := readProc(t, "/proc/net/ip_tables_names") + "|" + readProc(t, "/proc/net/ip6_tables_names")
			if !f.LiveRules.Probed {
				t.Fatalf("not probed: %q", f.Problems)
			}
			if !slices.Equal(f.LiveRules.KubeProxy, c.kubeProxy) || !slices.Equal(f.LiveRules.KubeletHint, c.hint) {
				t.Errorf("kube-proxy %q hint %q, want %q %q", f.LiveRules.KubeProxy, f.LiveRules.KubeletHint, c.kubeProxy, c.hint)
			}
			if before != after {
				t.Errorf("the probe changed the legacy tables: %q -> %q", before, after)
			}
		})
	}
}

// withoutNfacct drops the dumps' nfacct matches, whose accounting objects
// do not exist in a fresh namespace (the reference README's own recipe).
func withoutNfacct(file string) string {
	return "sed -E 's/ -m nfacct --nfacct-name +[a-z_]+//' " + file
}

func readProc(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// The live probe names kube-proxy's ipvs sets left in a namespace (the real
// ipset tool, the real kernel) and only kube-proxy's: kube-router's and
// fail2ban's sets are not leftovers.
func TestLiveRulesIPVSStateInNetns(t *testing.T) {
	nstest.Tool(t, "ipset")
	if !nstest.InNetns(t) {
		return
	}
	nstest.Sh(t, `
ipset create KUBE-CLUSTER-IP hash:ip,port family inet
ipset create KUBE-6-LOOP-BACK hash:ip,port,ip family inet6
ipset create KUBE-SRC-ABCDEFGHIJ hash:ip family inet
ipset create f2b-sshd hash:ip family inet
`)
	f := facts.Probe(hostfs.New("/"), facts.Options{Live: Read})
	if !f.LiveRules.Probed {
		t.Fatalf("not probed: %q", f.Problems)
	}
	got := slices.Sorted(slices.Values(f.LiveRules.IPVS))
	if want := []string{"ipset KUBE-6-LOOP-BACK", "ipset KUBE-CLUSTER-IP"}; !slices.Equal(got, want) {
		t.Errorf("ipvs state %q, want %q", got, want)
	}
}
