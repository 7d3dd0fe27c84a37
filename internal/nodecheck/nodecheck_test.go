package nodecheck

import (
	"os"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// fixture lays out a host root with a plan choosing planned (nil: no plan)
// and, when res is not nil, verify's status written by verify itself, so a
// change to the status format breaks this test, not the field.
func fixture(t *testing.T, planned *decide.Decision, res *verify.Result) hostfs.Root {
	t.Helper()
	root := hostfs.New(t.TempDir())
	if planned != nil {
		if _, err := plan.Write(root, plan.Plan{Decision: *planned}); err != nil {
			t.Fatal(err)
		}
	}
	if res != nil {
		if err := verify.WriteStatus(root, res); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func chose(b backend.Backend) *decide.Decision { return &decide.Decision{Backend: b} }

func TestCheckMapsStatusToNPDProtocol(t *testing.T) {
	nft := backend.IptablesNFT
	stranded := verify.Finding{Kind: verify.KindStranded, Backend: backend.IptablesLegacy, Message: "12 kube-proxy rules in iptables-legacy"}
	missing := verify.Finding{Kind: verify.KindMissingChain, Backend: nft, Message: "ip filter lacks 1 kube-proxy chain(s)"}
	unreadable := verify.Finding{Kind: verify.KindReadError, Backend: backend.NFTables, Message: "nft: permission denied"}
	for _, tc := range []struct {
		name    string
		planned *decide.Decision
		res     *verify.Result
		want    Status
		says    string
	}{
		{"ok", chose(nft), &verify.Result{OK: true, Expect: nft}, OK, "complete in iptables-nft"},
		{"findings", chose(nft), &verify.Result{Expect: nft, Findings: []verify.Finding{stranded, missing}}, Problem, "2 finding(s), first [stranded-rules] iptables-legacy"},
		{"read errors after a real finding", chose(nft), &verify.Result{Expect: nft, Findings: []verify.Finding{unreadable, missing}}, Problem, "1 finding(s), first [missing-chain]"},
		{"only read errors", chose(nft), &verify.Result{Expect: nft, Findings: []verify.Finding{unreadable}}, Unknown, "cannot tell: 1 backend(s) unreadable"},
		{"failed without findings", chose(nft), &verify.Result{Expect: nft}, Unknown, "cannot tell"},
		{"no plan", nil, nil, Unknown, "no plan"},
		{"no status", chose(nft), nil, Unknown, "no status"},
		{"stale status", chose(backend.NFTables), &verify.Result{OK: true, Expect: nft}, Unknown, "stale status: verified iptables-nft but the plan chose nftables"},
		{"turned off", &decide.Decision{Disabled: true}, nil, OK, "turned off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Check(fixture(t, tc.planned, tc.res))
			if v.Status != tc.want || !strings.Contains(v.Message, tc.says) {
				t.Errorf("Check = %s %q; want %s containing %q", v.Status, v.Message, tc.want, tc.says)
			}
			if strings.Contains(v.Message, "\n") || len(v.Message) > MaxMessage {
				t.Errorf("message is not one short line (%d bytes): %q", len(v.Message), v.Message)
			}
		})
	}
}

func TestCheckCannotTellFromACorruptStatus(t *testing.T) {
	root := fixture(t, chose(backend.IptablesNFT), nil)
	for name, content := range map[string]string{
		"not JSON": "{half",
		"too big":  `{"ok":true,"x":"` + strings.Repeat("a", MaxStatusSize) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(root.Path(hostfs.StatusFile), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if v := Check(root); v.Status != Unknown || !strings.HasPrefix(v.Message, "cannot tell") {
				t.Errorf("Check = %s %q; want unknown, cannot tell", v.Status, v.Message)
			}
		})
	}
	// A FIFO would block a plain read forever, and NPD would kill the check
	// at its timeout every 30s: ReadFileMax refuses it up front.
	fifo := root.Path(hostfs.StatusFile)
	os.Remove(fifo)
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if v := Check(root); v.Status != Unknown {
		t.Errorf("Check on a FIFO = %s %q; want unknown", v.Status, v.Message)
	}
}

func TestOneLineKeepsTheFirstLineWithinMaxMessageOnARuneBoundary(t *testing.T) {
	long := strings.Repeat("é", MaxMessage)
	got := oneLine("  first line\nsecond line")
	if got != "first line" {
		t.Errorf("oneLine = %q; want the first line", got)
	}
	got = oneLine(long)
	if len(got) > MaxMessage || !strings.HasSuffix(got, "...") || !strings.HasPrefix(got, "é") {
		t.Errorf("oneLine(long) = %d bytes %q", len(got), got)
	}
	for _, r := range strings.TrimSuffix(got, "...") {
		if r != 'é' {
			t.Fatalf("oneLine cut inside a rune: %q", got)
		}
	}
}

func FuzzCheckStatus(f *testing.F) {
	b, _ := verify.JSON(&verify.Result{Expect: backend.NFTables, Findings: []verify.Finding{{Kind: verify.KindStranded, Message: "x\ny"}}})
	f.Add(b)
	f.Add([]byte(`{"ok":true,"expect":"nftables"}`))
	f.Add([]byte(`null`))
	root := hostfs.New(f.TempDir())
	if _, err := plan.Write(root, plan.Plan{Decision: decide.Decision{Backend: backend.NFTables}}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(root.Path(hostfs.StatusFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		v := Check(root)
		if v.Status < OK || v.Status > Unknown {
			t.Fatalf("status %d is outside NPD's protocol", v.Status)
		}
		if v.Message == "" || strings.Contains(v.Message, "\n") || len(v.Message) > MaxMessage {
			t.Fatalf("message breaks the one-line contract: %q", v.Message)
		}
	})
}
