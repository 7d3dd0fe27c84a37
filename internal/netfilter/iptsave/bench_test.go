package iptsave

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// kubeProxySave returns iptables-save text shaped like kube-proxy's nat
// table with n services of two endpoints each.
func kubeProxySave(n int) string {
	var b strings.Builder
	b.WriteString("*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-MARK-MASQ - [0:0]\n")
	for i := range n {
		fmt.Fprintf(&b, ":KUBE-SVC-%08d - [0:0]\n:KUBE-SEP-%08dA - [0:0]\n:KUBE-SEP-%08dB - [0:0]\n", i, i, i)
	}
	b.WriteString("-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n")
	for i := range n {
		fmt.Fprintf(&b, "-A KUBE-SERVICES -d 172.30.%d.%d/32 -p tcp -m comment --comment \"ns/svc%d:p80 cluster IP\" -m tcp --dport 80 -j KUBE-SVC-%08d\n", i/256, i%256, i, i)
		fmt.Fprintf(&b, "-A KUBE-SVC-%08d ! -s 10.0.0.0/8 -d 172.30.%d.%d/32 -p tcp -m comment --comment \"ns/svc%d:p80 cluster IP\" -m tcp --dport 80 -j KUBE-MARK-MASQ\n", i, i/256, i%256, i)
		fmt.Fprintf(&b, "-A KUBE-SVC-%08d -m comment --comment \"ns/svc%d:p80 -> 10.1.%d.%d:80\" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-%08dA\n", i, i, i/256, i%256, i)
		fmt.Fprintf(&b, "-A KUBE-SVC-%08d -m comment --comment \"ns/svc%d:p80 -> 10.2.%d.%d:80\" -j KUBE-SEP-%08dB\n", i, i, i/256, i%256, i)
		for _, e := range []string{"A", "B"} {
			fmt.Fprintf(&b, "-A KUBE-SEP-%08d%s -s 10.1.%d.%d/32 -m comment --comment \"ns/svc%d:p80\" -j KUBE-MARK-MASQ\n", i, e, i/256, i%256, i)
			fmt.Fprintf(&b, "-A KUBE-SEP-%08d%s -p tcp -m comment --comment \"ns/svc%d:p80\" -m tcp -j DNAT --to-destination 10.1.%d.%d:80\n", i, e, i, i/256, i%256)
		}
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

func BenchmarkParseIptablesSave5k(b *testing.B) {
	text := kubeProxySave(5000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := Parse(strings.NewReader(text), rules.IPv4); err != nil {
			b.Fatal(err)
		}
	}
}
