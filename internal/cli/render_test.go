package cli

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

func runRender(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runMain(t, append([]string{"render"}, args...)...)
}

func TestRenderUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "render needs a subcommand: expected or live"},
		{[]string{"expected"}, "--backend is required: one of iptables-legacy, iptables-nft, nftables"},
		{[]string{"expected", "--backend", "ipvs"}, `--backend: unknown backend "ipvs"`},
		{[]string{"expected", "--backend", "nftables", "--family", "inet"}, `--family "inet": valid families are ipv4, ipv6`},
		{[]string{"expected", "--backend", "nftables", "--kubernetes", "latest"}, `--kubernetes: version "latest"`},
		{[]string{"expected", "--backend", "nftables", "--services", "-1"}, "--services -1: must be 0 or more"},
		{[]string{"live", "--backend", "ipvs"}, `--backend: unknown backend "ipvs"`},
		{[]string{"live", "--bogus"}, "unknown flag: --bogus"},
	} {
		code, _, stderr := runRender(t, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("render %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// load loads a render's two family sections into backend b with the
// loader apply's trial and bench use.
func load(t *testing.T, b backend.Backend, text string) {
	t.Helper()
	parts, err := rules.SplitFamilies(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 {
		t.Errorf("%s render has families %v, want ipv4 and ipv6", b, parts)
	}
	for fam, body := range parts {
		if err := ruleload.LoadText(b, fam, body); err != nil {
			t.Fatalf("the %s render: %v", b, err)
		}
	}
}

// TestRenderExpectedLoadsAndLiveRoundTrips loads `render expected` into a
// fresh namespace with each backend's own loader, checks that `render live`
// prints it back unchanged, then that `render live` round-trips: flush,
// load the live render, render again.
func TestRenderExpectedLoadsAndLiveRoundTrips(t *testing.T) {
	for _, b := range backend.All {
		t.Run(string(b), func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
				nstest.Tool(t, ruleload.Argv(b, fam)[0])
			}
			code, want, stderr := runRender(t, "expected", "--backend", string(b), "--services", "5")
			if code != 0 {
				t.Fatalf("render expected: exit %d: %s", code, stderr)
			}
			load(t, b, want)
			code, live, stderr := runRender(t, "live", "--backend", string(b))
			if code != 0 {
				t.Fatalf("render live: exit %d: %s", code, stderr)
			}
			if !strings.HasPrefix(live, "# backend "+string(b)+"\n") || !strings.Contains(live, "KUBE-") && !strings.Contains(live, "kube-proxy") {
				t.Fatalf("render live shows nothing of kube-proxy:\n%s", live)
			}
			// Both are canonical text, and verify compares exactly these two
			// (the model against what the readers make of the kernel's
			// copy), so they must be equal byte for byte: a spelling the
			// model writes differently from the kernel's own would read as
			// drift on every node.
			if live != want {
				t.Errorf("render live of the loaded `render expected` differs from it:\n%s", lineDiff(want, live))
			}
			nstest.Flush(t, b)
			load(t, b, live)
			if _, again, _ := runRender(t, "live", "--backend", string(b)); again != live {
				t.Errorf("render live does not round-trip:\n%s", lineDiff(live, again))
			}
		})
	}
}

// lineDiff lists the lines only in a or only in b.
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out strings.Builder
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out.WriteString("- " + l + "\n")
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out.WriteString("+ " + l + "\n")
		}
	}
	return out.String()
}
