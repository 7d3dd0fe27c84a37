package costbench

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

func needLoaders(t *testing.T, b backend.Backend) {
	t.Helper()
	for _, name := range loaders(b) {
		nstest.Tool(t, name)
	}
	if b == backend.IptablesLegacy {
		nstest.Tool(t, "iptables-legacy-save") // the legacy reader runs it
		nstest.Tool(t, "ip6tables-legacy-save")
	}
}

// At 1,000 services (CI's size) every backend loads the full footprint
// and then the partial sync, and what the kernel holds afterwards is
// exactly the "after" footprint: the partial text moved the endpoint, no
// more and no less, so the timed work is the work kube-proxy would do.
func TestMeasureEveryBackendAt1k(t *testing.T) {
	for _, b := range backend.All {
		t.Run(string(b), func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			needLoaders(t, b)
			var progress strings.Builder
			res, err := Measure(context.Background(), b, 1000, &progress)
			if err != nil {
				t.Fatal(err)
			}
			full, okF := res.Step(bench.StepFull)
			part, okP := res.Step(bench.StepPartial)
			if !okF || !okP || full.WallSeconds <= 0 || part.WallSeconds <= 0 {
				t.Fatalf("missing or zero figures: %+v", res)
			}
			// iptables: 1,000 services x (1 service rule + 1 chain rule + 2
			// endpoints x 3 rules) per family, at least; nftables (1.36+
			// layout): one dnat rule per service and family, at least.
			least := 2 * 1000 * 4
			if b == backend.NFTables {
				least = 2 * 1000
			}
			if full.Rules < least || part.Rules >= full.Rules/2 {
				t.Errorf("rule counts look wrong: full %d, partial %d", full.Rules, part.Rules)
			}
			if got := strings.Count(progress.String(), "\n"); got != 2 {
				t.Errorf("want one progress line per step, got:\n%s", progress.String())
			}
			fp, err := newFootprint(b, 1000)
			if err != nil {
				t.Fatal(err)
			}
			live, err := netfilter.NewSystem(hostfs.New("/")).Read(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := rules.Format(live), rules.Format(fp.after); got != want {
				t.Errorf("after the partial sync the kernel does not hold the moved footprint (%d vs %d bytes)", len(got), len(want))
			}
		})
	}
}

// bench never touches the namespace it is started from: rules there
// (standing in for the host's) are byte-identical before and after a run
// of every backend, and the child refuses to run in its parent's namespace.
func TestRunLeavesCallersNamespaceAlone(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	for _, b := range backend.All {
		needLoaders(t, b)
	}
	nstest.Sh(t, `nft add table ip host-marker; nft add chain ip host-marker c; nft add rule ip host-marker c counter accept
iptables-legacy -t filter -A INPUT -s 192.0.2.1 -j ACCEPT`)
	snapshot := func() string {
		return nstest.Sh(t, "nft list ruleset; iptables-legacy-save | sed '/^#/d'; ip6tables-legacy-save | sed '/^#/d'")
	}
	before := snapshot()
	var progress strings.Builder
	rep, err := Run(context.Background(), Plan{Services: 20, Backends: backend.All, Kernel: "test", Self: []string{os.Args[0]}}, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rep.Results) != len(backend.All) || len(rep.Tools) == 0 {
		t.Fatalf("want every backend measured and its tools recorded, got %+v", rep)
	}
	if after := snapshot(); after != before {
		t.Errorf("bench changed the caller's namespace:\n--- before\n%s\n--- after\n%s", before, after)
	}
}

// A stray RKE2_PROXY_BACKEND_BENCH_CHILD makes the program a bench child
// that refuses, whatever the variable says: only orders from the parent's
// pipe, naming the namespace the child runs in and not the parent's, let
// it load. The namespace it was started in keeps its rules byte for byte.
func TestStrayChildEnvRefuses(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	nstest.Sh(t, `nft add table ip host-marker; nft add chain ip host-marker c; nft add rule ip host-marker c counter accept`)
	before := nstest.Sh(t, "nft list ruleset")
	here := netnsID("self")
	for _, c := range []struct {
		name, env, orders, want string
	}{
		{"the old form, naming another parent", "net:[1]|nftables|5", "", "this process was not started by bench"},
		{"an fd number, but no pipe from bench", "3", "", "this process was not started by bench"},
		{"orders naming this namespace as the parent's too", "3", here + "|" + here + "|nftables|5", "still in the parent's network namespace"},
		{"orders naming another namespace as the child's", "3", "net:[1]|" + here + "|nftables|5", "not net:[1], the one bench made for it"},
	} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), ChildEnv+"="+c.env)
		if c.orders != "" {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			w.WriteString(c.orders + "\n")
			w.Close()
			cmd.ExtraFiles = []*os.File{r}
			defer r.Close()
		}
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) || !strings.Contains(string(out), "refusing to load rules") {
			t.Errorf("%s: want a refusal saying %q; got %v:\n%s", c.name, c.want, err, out)
		}
		if after := nstest.Sh(t, "nft list ruleset"); after != before {
			t.Errorf("%s: the namespace's rules changed:\n--- before\n%s\n--- after\n%s", c.name, before, after)
		}
	}
}
