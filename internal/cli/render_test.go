package cli

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
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

// loaders per backend and family, fed one family section on stdin.
var loaders = map[backend.Backend]map[rules.Family][]string{
	backend.IptablesLegacy: {rules.IPv4: {"iptables-legacy-restore"}, rules.IPv6: {"ip6tables-legacy-restore"}},
	backend.IptablesNFT:    {rules.IPv4: {"iptables-nft-restore"}, rules.IPv6: {"ip6tables-nft-restore"}},
	backend.NFTables:       {rules.IPv4: {"nft", "-f", "-"}, rules.IPv6: {"nft", "-f", "-"}},
}

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
		argv := loaders[b][fam]
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v rejects the %s %s render: %v\n%s", argv, b, fam, err, out)
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
			for _, argv := range loaders[b] {
				nstest.Tool(t, argv[0])
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
			flush(t, b)
			load(t, b, live)
			if _, again, _ := runRender(t, "live", "--backend", string(b)); again != live {
				t.Errorf("render live does not round-trip:\n%s", lineDiff(live, again))
			}
		})
	}
}

func flush(t *testing.T, b backend.Backend) {
	t.Helper()
	if b == backend.IptablesLegacy {
		nstest.Sh(t, `for t in $(cat /proc/net/ip_tables_names); do iptables-legacy -t $t -F; iptables-legacy -t $t -X; done
for t in $(cat /proc/net/ip6_tables_names); do ip6tables-legacy -t $t -F; ip6tables-legacy -t $t -X; done`)
		return
	}
	nstest.Sh(t, "nft flush ruleset")
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
