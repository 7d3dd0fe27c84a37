package switchover

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Every ipvs-only setting is named with where it is and what it becomes;
// the operator's are to be removed by the operator, the tool's own are
// left out of the drop-in; settings of other modes are not reported.
func TestTranslateIPVS(t *testing.T) {
	const main, rancher = "/etc/rancher/rke2/config.yaml", "/etc/rancher/rke2/config.yaml.d/50-rancher.yaml"
	args := []rke2.Setting{
		{Value: "ipvs-scheduler=sh", File: main, Line: 2},
		{Value: "--ipvs-strict-arp=true", File: main, Line: 2},
		{Value: "ipvs-exclude-cidrs=10.0.0.0/8", File: main, Line: 2},
		{Value: "ipvs-tcp-timeout=900s", File: rancher, Line: 4},
		{Value: "ipvs-tcpfin-timeout=30s", File: rancher, Line: 4},
		{Value: "ipvs-udp-timeout=0s", File: rancher, Line: 4},
		{Value: "ipvs-min-sync-period=5s", File: rancher, Line: 4},
		{Value: "feature-gates=KubeProxyIPVS=true", File: rancher, Line: 4},
		{Value: "metrics-bind-address=0.0.0.0:10249", File: main, Line: 2},
	}
	got := TranslateIPVS(args, []string{"ipvs-scheduler=rr", "iptables-sync-period=1m"}, hostfs.ConfigFile, backend.NFTables)
	var lines []string
	for _, tr := range got {
		lines = append(lines, tr.String())
	}
	text := strings.Join(lines, "\n")
	t.Logf("report:\n%s", text)
	if len(got) != 9 {
		t.Fatalf("%d translations, want 9 (the 8 ipvs items and the tool's ipvs-scheduler)", len(got))
	}
	for _, want := range []string{
		main + ` line 2, kube-proxy-arg "ipvs-scheduler=sh": nftables mode has no hashing scheduler: the Services that relied on a client keeping its endpoint need sessionAffinity: ClientIP`,
		`"--ipvs-strict-arp=true": not needed: no kube-ipvs0 answers ARP`,
		"reset them only if nothing else on the node needs them",
		`"ipvs-exclude-cidrs=10.0.0.0/8": not needed`,
		rancher + ` line 4, kube-proxy-arg "ipvs-tcp-timeout=900s": conntrack-tcp-timeout-established=900s`,
		`"ipvs-tcpfin-timeout=30s": kube-proxy has no flag for it: the sysctl net.netfilter.nf_conntrack_tcp_timeout_fin_wait`,
		`"ipvs-udp-timeout=0s": nothing: 0 kept IPVS's default`,
		`"ipvs-min-sync-period=5s": iptables-min-sync-period=5s (nftables mode reads it)`,
		`"feature-gates=KubeProxyIPVS=true": the gate KubeProxyIPVS gates only ipvs mode`,
		"remove the item from " + rancher + " (rke2-proxy-backend never edits RKE2's config)",
		hostfs.ConfigFile + `, kube-proxy-arg "ipvs-scheduler=rr": nothing: nftables mode picks endpoints at random, as even as round robin; the drop-in leaves it out outside ipvs mode`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(text, "metrics-bind-address") || strings.Contains(text, "iptables-sync-period=1m") {
		t.Errorf("a setting of every mode is reported")
	}
	if got := TranslateIPVS(args[8:], nil, hostfs.ConfigFile, backend.IptablesNFT); len(got) != 0 {
		t.Errorf("no ipvs item, yet %v", got)
	}
}

// Any item: translated exactly when it is ipvs's (an ipvs-* flag,
// proxy-mode=ipvs, a KubeProxyIPVS gate), and its line then names the
// item as written and says what to do.
func FuzzTranslateIPVS(f *testing.F) {
	for _, seed := range []string{"ipvs-scheduler=sh", "--ipvs-strict-arp", "proxy-mode=ipvs", "proxy-mode=iptables", "feature-gates=KubeProxyIPVS=true,X=false", "ipvs-tcp-timeout=0s", "metrics-bind-address=0.0.0.0", "", "=", "--"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, item string) {
		got := TranslateIPVS([]rke2.Setting{{Value: item, File: "/etc/rancher/rke2/config.yaml", Line: 3}}, nil, hostfs.ConfigFile, backend.NFTables)
		name, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(item), "--"), "=")
		want := strings.HasPrefix(name, "ipvs-") || (name == "proxy-mode" && strings.TrimSpace(value) == "ipvs") || (name == "feature-gates" && strings.Contains(value, "KubeProxyIPVS"))
		if (len(got) == 1) != want || len(got) > 1 {
			t.Fatalf("%q: %d translations, want ipvs's: %v", item, len(got), want)
		}
		if want && (got[0].Becomes == "" || !strings.Contains(got[0].String(), strconv.Quote(item)) || !strings.Contains(got[0].String(), "line 3")) {
			t.Errorf("%q: %q", item, got[0])
		}
	})
}
