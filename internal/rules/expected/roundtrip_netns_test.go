package expected

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// What `render expected` prints, once loaded with the backend's own tool
// into an empty namespace, is exactly what `render live` prints back: the
// expected model spells every rule, comment, set and map the way the kernel
// readers do, so a diff between the two shows only real differences.
func TestExpectedRoundTripsThroughKernel(t *testing.T) {
	type layout struct {
		b    backend.Backend
		kube rke2.KubeVersion // zero: the newest
	}
	layouts := []layout{{b: backend.IptablesLegacy}, {b: backend.IptablesNFT}, {b: backend.NFTables},
		// Older layouts: KUBE-MARK-DROP before 1.28, nftables chains before 1.34.
		{backend.IptablesLegacy, rke2.KubeVersion{Major: 1, Minor: 27, Patch: -1}},
		{backend.NFTables, rke2.KubeVersion{Major: 1, Minor: 29, Patch: -1}},
	}
	for _, l := range layouts {
		b := l.b
		prefix := string(b)
		if l.kube.Known() {
			prefix += "@" + l.kube.String()
		}
		// One family alone (render expected --family F), and both (the default).
		for _, fams := range [][]rules.Family{{rules.IPv4}, {rules.IPv6}, {rules.IPv4, rules.IPv6}} {
			for _, services := range []int{0, 3} {
				name := string(fams[0])
				if len(fams) == 2 {
					name = "both"
				}
				t.Run(fmt.Sprintf("%s/%s/services=%d", prefix, name, services), func(t *testing.T) {
					if !nstest.InNetns(t) {
						return
					}
					if b == backend.IptablesLegacy {
						// The legacy reader runs the *-save tools.
						nstest.Tool(t, "iptables-legacy-save")
						nstest.Tool(t, "ip6tables-legacy-save")
					}
					rs, err := Render(Options{Backend: b, Kubernetes: l.kube, Services: services, Families: fams})
					if err != nil {
						t.Fatal(err)
					}
					want := rules.Format(rs)
					for _, fam := range fams {
						argv := ruleload.Argv(b, fam)
						nstest.Tool(t, argv[0])
						cmd := exec.Command(argv[0], argv[1:]...)
						cmd.Stdin = strings.NewReader(rules.FormatFamily(rs, fam))
						if out, err := cmd.CombinedOutput(); err != nil {
							t.Fatalf("%v rejects the expected %s %s text: %v\n%s\n%s", argv, b, fam, err, out, want)
						}
					}
					// "/" is this namespace's view: /proc/net/ip*_tables_names,
					// which the legacy reader consults, is per network namespace.
					live, err := netfilter.NewSystem(hostfs.New("/")).Read(context.Background(), b)
					if err != nil {
						t.Fatalf("reading %s back: %v", b, err)
					}
					if got := rules.Format(live); got != want {
						t.Errorf("render live differs from render expected (- expected, + live):\n%s", lineDiff(want, got))
					}
				})
			}
		}
	}
}

// lineDiff lists, in order, the lines of want missing from got and the
// lines of got missing from want.
func lineDiff(want, got string) string {
	count := func(s string) map[string]int {
		m := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			m[l]++
		}
		return m
	}
	w, g := count(want), count(got)
	var out strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if g[l] == 0 {
			out.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if w[l] == 0 {
			out.WriteString("+ " + l + "\n")
		}
	}
	if out.Len() == 0 {
		out.WriteString("(same lines, different order or count)\n--- expected:\n" + want + "--- live:\n" + got)
	}
	return out.String()
}
