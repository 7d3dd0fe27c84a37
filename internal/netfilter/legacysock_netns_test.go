package netfilter

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/legacy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// The in-process (getsockopt) legacy reader must see what the save-based
// one sees, for every footprint we know: the reference dumps, kube-proxy's
// rendered footprint, and a ruleset with the corner cases of the format.

func TestSockoptReadsStartupDump(t *testing.T) {
	ref := nstest.RefDir(t)
	if !nstest.Setup(t, "sh "+filepath.Join(ref, "derived/simulate-startup.sh")+" legacy 2>&1", "iptables-legacy-save", "nfacct") {
		return
	}
	compareLegacyReaders(t)
}

func TestSockoptReadsTracepacketFixture(t *testing.T) {
	if !loadTracepacketFixture(t, "iptables-legacy-restore") {
		return
	}
	compareLegacyReaders(t)
}

func TestSockoptReadsExpectedFootprint(t *testing.T) {
	if !nstest.Setup(t, "", "iptables-legacy-restore", "ip6tables-legacy-restore") {
		return
	}
	expectedtest.Load(t, expected.Options{Backend: backend.IptablesLegacy, Services: 50})
	compareLegacyReaders(t)
}

// TestSockoptReadsLargeTable reads a nat table of several MiB, whose
// pages the reader gives back as it decodes (legacy.Socket.Read's free):
// what it decodes must not have been given back yet.
func TestSockoptReadsLargeTable(t *testing.T) {
	if !nstest.Setup(t, "", "iptables-legacy-restore", "ip6tables-legacy-restore") {
		return
	}
	expectedtest.Load(t, expected.Options{Backend: backend.IptablesLegacy, Services: 1000})
	sock, err := legacy.Open(false)
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	info, err := sock.Info("nat")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size < 3<<20 {
		t.Fatalf("the nat table is %d bytes; the test needs several MiB to give pages back", info.Size)
	}
	compareLegacyReaders(t)
}

// TestSockoptReadsCornerCases covers what kube-proxy's rules lack: a goto,
// a DROP policy, an empty user chain, a user chain whose last rule is an
// explicit RETURN (the closing RETURN entry must not be taken for it), a
// rule without a target, two comments, a jump to a chain defined later,
// and the raw table.
func TestSockoptReadsCornerCases(t *testing.T) {
	if !nstest.Setup(t, "", "iptables-legacy-restore", "ip6tables-legacy-restore") {
		return
	}
	body := `*raw
:PREROUTING ACCEPT [0:0]
:OUTPUT DROP [0:0]
-A OUTPUT -m comment --comment "raw out" -j ACCEPT
COMMIT
*filter
:INPUT DROP [0:0]
:FORWARD ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:A-EMPTY - [0:0]
:B-RET - [0:0]
:Z-LAST - [0:0]
-A INPUT -p tcp -m comment --comment "first" -m comment --comment "second" -g Z-LAST
-A INPUT -s 10.0.0.0/8
-A INPUT -j A-EMPTY
-A INPUT -m comment --comment "with \"quotes\" and spaces" -j B-RET
-A FORWARD -j DROP
-A B-RET -j Z-LAST
-A B-RET -j RETURN
-A Z-LAST -j A-EMPTY
-A Z-LAST -m comment --comment "back" -j RETURN
COMMIT
`
	nstest.Sh(t, "iptables-legacy-restore <<'EOF'\n"+body+"EOF\n")
	nstest.Sh(t, "ip6tables-legacy-restore <<'EOF'\n"+strings.Replace(body, "10.0.0.0/8", "fd00::/8", 1)+"EOF\n")
	compareLegacyReaders(t)
}

// TestSockoptReadsNothingUnlisted: a GET on a table that is not loaded
// creates it, so with empty table lists nothing is read, and a table the
// root lists but this namespace lacks is not created either.
func TestSockoptReadsNothingUnlisted(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	for _, listed := range []string{"", "filter\nnat\n"} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "proc/net"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"ip_tables_names", "ip6_tables_names"} {
			if err := os.WriteFile(filepath.Join(root, "proc/net", f), []byte(listed), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		before := liveTableLists(t)
		sys := NewSystem(hostfs.New(root))
		sys.Shallow = true
		rs, err := sys.Read(context.Background(), backend.IptablesLegacy)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.Tables) != 0 {
			t.Errorf("listed %q: read %d tables from a namespace without any", listed, len(rs.Tables))
		}
		if after := liveTableLists(t); after != before || after != "|" {
			t.Errorf("listed %q: table lists were %q, now %q; the read created tables", listed, before, after)
		}
	}
}

func liveTableLists(t *testing.T) string {
	t.Helper()
	v4, err := os.ReadFile("/proc/net/ip_tables_names")
	if err != nil {
		t.Fatal(err)
	}
	v6, err := os.ReadFile("/proc/net/ip6_tables_names")
	if err != nil {
		t.Fatal(err)
	}
	return string(v4) + "|" + string(v6)
}

// compareLegacyReaders reads the namespace with iptables-legacy-save and
// in-process, with and without skipped chains, and compares what verify
// uses: tables, chains in order, policies, rule counts, jumps, comments.
func compareLegacyReaders(t *testing.T) {
	t.Helper()
	want, _ := readText(t, backend.IptablesLegacy)
	if len(want.Tables) == 0 {
		t.Fatal("the save-based reader found no tables; the test loaded nothing")
	}
	for _, skip := range []func(string) bool{nil, vocab.IsPerServiceChain} {
		before := liveTableLists(t)
		sys := NewSystem(hostfs.New("/"))
		sys.Shallow, sys.SkipChain = true, skip
		got, err := sys.Read(context.Background(), backend.IptablesLegacy)
		if err != nil {
			t.Fatalf("in-process read: %v", err)
		}
		if after := liveTableLists(t); after != before {
			t.Errorf("table lists were %q, now %q after the read", before, after)
		}
		compareShallow(t, want, got, skip)
	}
}

// compareShallow holds a shallow read (got) to a full one (want) of the
// same rules: the same tables, chains in order, hooks, policies and rule
// counts; every rule NotRead with the full read's Jump and Comment, or
// with nothing at all in a chain skip names. It returns how many rules
// were read shallow and how many of those carry a comment, so a caller
// can tell its fixture exercised both.
func compareShallow(t *testing.T, want, got *rules.Ruleset, skip func(string) bool) (read, comments int) {
	t.Helper()
	if got.Backend != want.Backend || len(got.Tables) != len(want.Tables) {
		t.Fatalf("shallow read has %d %s tables, full read %d %s", len(got.Tables), got.Backend, len(want.Tables), want.Backend)
	}
	skipped := 0
	for i, wt := range want.Tables {
		gt := got.Tables[i]
		where := string(wt.Family) + " " + wt.Name
		if gt.Family != wt.Family || gt.Name != wt.Name || len(gt.Chains) != len(wt.Chains) {
			t.Errorf("table %d: shallow %s %s with %d chains, full %s with %d", i, gt.Family, gt.Name, len(gt.Chains), where, len(wt.Chains))
			continue
		}
		for j, wc := range wt.Chains {
			gc := gt.Chains[j]
			if gc.Name != wc.Name || gc.Hook != wc.Hook || gc.Policy != wc.Policy || len(gc.Rules) != len(wc.Rules) {
				t.Errorf("%s chain %d: shallow %s hook %q policy %q with %d rules, full %s hook %q policy %q with %d",
					where, j, gc.Name, gc.Hook, gc.Policy, len(gc.Rules), wc.Name, wc.Hook, wc.Policy, len(wc.Rules))
				continue
			}
			isSkipped := skip != nil && skip(wc.Name)
			if isSkipped {
				skipped++
			}
			for k, wr := range wc.Rules {
				wantRule := rules.Rule{NotRead: true, Jump: wr.Jump, Comment: wr.Comment}
				if isSkipped {
					wantRule = rules.Rule{NotRead: true}
				} else {
					read++
					if wr.Comment != "" {
						comments++
					}
				}
				if gr := gc.Rules[k]; gr != wantRule {
					t.Errorf("%s %s rule %d (%s): shallow %+v, want %+v", where, wc.Name, k+1, wr.Text, gr, wantRule)
				}
			}
		}
	}
	t.Logf("compared %d tables (%d chains skipped, %d rules read shallow, %d with a comment)", len(want.Tables), skipped, read, comments)
	return read, comments
}
