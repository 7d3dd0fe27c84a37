package proof

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// fixture lays out a host root with a plan choosing planned (nil: no plan)
// and, when res is not nil, verify's status written by verify itself, so a
// change to the status format breaks this test, not the field.
func fixture(t *testing.T, planned *decide.Decision, res *verify.Result) hostfs.Root {
	t.Helper()
	root := hostfs.New(t.TempDir())
	if planned != nil {
		if _, err := plan.Write(root, appliedPlan(*planned)); err != nil {
			t.Fatal(err)
		}
	}
	if res != nil {
		if err := WriteStatus(root, res); err != nil {
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
		// watch stores the writer of the change the failing run followed;
		// status.json keeps it and the condition names it briefly.
		{"findings after a change by nft", chose(nft), &verify.Result{Expect: nft, Findings: []verify.Finding{missing},
			Writer: &events.Writer{PID: 4242, Comm: "nft", Origin: events.Origin{Exited: true}, Commits: 1}}, Problem, "1 finding(s) after a change by 4242 (nft), first [missing-chain]"},
		{"findings, writer unknown", chose(nft), &verify.Result{Expect: nft, Findings: []verify.Finding{missing}, WriterUnknown: "iptables-legacy sends no change events"}, Problem, "1 finding(s) (writer unknown), first [missing-chain]"},
		{"read errors after a real finding", chose(nft), &verify.Result{Expect: nft, Findings: []verify.Finding{unreadable, missing}}, Problem, "1 finding(s), first [missing-chain]"},
		{"only read errors", chose(nft), &verify.Result{Expect: nft, Findings: []verify.Finding{unreadable}}, Unknown, "cannot tell: 1 backend(s) unreadable"},
		{"failed without findings", chose(nft), &verify.Result{Expect: nft}, Unknown, "cannot tell"},
		{"no plan", nil, nil, Unknown, "no plan"},
		{"no status", chose(nft), nil, Unknown, "no status"},
		{"stale status", chose(backend.NFTables), &verify.Result{OK: true, Expect: nft}, Unknown, "stale status: verified iptables-nft but the plan applied nftables"},
		{"turned off", &decide.Decision{Disabled: true}, nil, OK, "turned off"},
		// An ipvs node is judged as every node: by verify's status.
		{"ipvs mode, no status", &decide.Decision{Backend: nft, ProxyMode: "ipvs"}, nil, Unknown, "no status"},
		{"ipvs mode, judged", &decide.Decision{Backend: nft, ProxyMode: "ipvs"}, &verify.Result{Expect: nft, Findings: []verify.Finding{{Kind: verify.KindIPVSMissingSets, Backend: nft, Message: "IPv4: kube-proxy's ipvs mode lacks 1 ipset(s): KUBE-CLUSTER-IP"}}}, Problem, "KUBE-CLUSTER-IP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Check(fixture(t, tc.planned, tc.res), CheckOptions{MaxAge: DefaultMaxAge})
			if v.Status != tc.want || !strings.Contains(v.Message, tc.says) {
				t.Errorf("Check = %s %q; want %s containing %q", v.Status, v.Message, tc.want, tc.says)
			}
			if strings.Contains(v.Message, "\n") || len(v.Message) > MaxMessage {
				t.Errorf("message is not one short line (%d bytes): %q", len(v.Message), v.Message)
			}
		})
	}
}

// The watch heartbeat's age decides staleness: a fresh beat leaves an OK
// status OK, one older than MaxAge makes it unknown with the unit to look
// at, whatever status.json's own mtime; no heartbeat (no watch this boot)
// and MaxAge 0 judge the status as it is.
func TestCheckAgeLimitFollowsTheWatchHeartbeat(t *testing.T) {
	nft := backend.IptablesNFT
	root := fixture(t, chose(nft), &verify.Result{OK: true, Expect: nft})
	now := time.Date(2026, 11, 30, 19, 0, 0, 0, time.UTC)
	opts := CheckOptions{MaxAge: 2 * time.Minute, Now: now}
	// status.json a day old: never judged by its own mtime.
	day := now.Add(-24 * time.Hour)
	if err := os.Chtimes(root.Path(hostfs.StatusFile), day, day); err != nil {
		t.Fatal(err)
	}
	if v := Check(root, opts); v.Status != OK {
		t.Errorf("no heartbeat (verify unit only), day-old status: %s %q; want ok", v.Status, v.Message)
	}
	for _, tc := range []struct {
		age  time.Duration
		opts CheckOptions
		want Status
		says string
	}{
		{30 * time.Second, opts, OK, "complete in iptables-nft"},
		{2 * time.Minute, opts, OK, "complete"},
		{5*time.Minute + 400*time.Millisecond, opts, Unknown, "stale status: watch's last heartbeat is 5m0s old (over --max-age 2m0s); is rke2-proxy-backend-watch running?"},
		{time.Hour, CheckOptions{Now: now}, OK, "complete"},
	} {
		if err := root.Touch(hostfs.WatchHeartbeat, now.Add(-tc.age)); err != nil {
			t.Fatal(err)
		}
		if v := Check(root, tc.opts); v.Status != tc.want || !strings.Contains(v.Message, tc.says) {
			t.Errorf("heartbeat %s old, max-age %s: %s %q; want %s containing %q", tc.age, tc.opts.MaxAge, v.Status, v.Message, tc.want, tc.says)
		}
	}
	// The beat is the mtime alone: status.json's no-timestamp rule holds
	// for the heartbeat too.
	if data, err := os.ReadFile(root.Path(hostfs.WatchHeartbeat)); err != nil || len(data) != 0 {
		t.Errorf("heartbeat file holds %q (%v); want it empty: the mtime is the beat", data, err)
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
			if v := Check(root, CheckOptions{}); v.Status != Unknown || !strings.HasPrefix(v.Message, "cannot tell") {
				t.Errorf("Check = %s %q; want unknown, cannot tell", v.Status, v.Message)
			}
		})
	}
	// A FIFO would block a plain read forever, and NPD would kill the check
	// at its timeout every 30s: ReadFileMax refuses it up front.
	fifo := root.Path(hostfs.StatusFile)
	os.Remove(fifo)
	if err := mkfifo(fifo); err != nil {
		testhost.Unmet(t, "mkfifo: %v", err)
	}
	if v := Check(root, CheckOptions{}); v.Status != Unknown {
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
	b, _ := JSON(&verify.Result{Expect: backend.NFTables, Findings: []verify.Finding{{Kind: verify.KindStranded, Message: "x\ny"}}})
	f.Add(b)
	f.Add([]byte(`{"ok":true,"expect":"nftables"}`))
	f.Add([]byte(`null`))
	root := hostfs.New(f.TempDir())
	if _, err := plan.Write(root, appliedPlan(decide.Decision{Backend: backend.NFTables})); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(root.Path(hostfs.StatusFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
		v := Check(root, CheckOptions{MaxAge: DefaultMaxAge})
		if v.Status < OK || v.Status > Unknown {
			t.Fatalf("status %d is outside NPD's protocol", v.Status)
		}
		if v.Message == "" || strings.Contains(v.Message, "\n") || len(v.Message) > MaxMessage {
			t.Fatalf("message breaks the one-line contract: %q", v.Message)
		}
	})
}
