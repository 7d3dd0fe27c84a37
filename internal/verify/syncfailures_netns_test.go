package verify

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
)

// failingRestore is iptables-restore and ip6tables-restore as kube-proxy's
// image would run them on a node where writing fails: the first $FAILS
// runs that write kube-proxy's rules (--noflush) fail, each name counting
// its own, then the real tool runs.
const failingRestore = `#!/bin/sh
name=$(basename "$0")
case " $* " in *" --noflush "*)
	n=$(cat "$STATE/$name" 2>/dev/null || echo 0)
	if [ "$n" -lt "$FAILS" ]; then
		echo $((n + 1)) > "$STATE/$name"
		echo "$name: line 1 failed (test: failing restore $((n + 1)) of $FAILS)" >&2
		exit 1
	fi;;
esac
exec "$REAL/$name" "$@"
`

// oraclePage runs the newest real iptables proxier (iptables-legacy; 1.38 has none)
// with its first fails restores per family failing, until it has synced,
// and returns its /metrics page. The 1s sync period is kube-proxy's retry
// interval after a failed sync (and its canary check's period), so each
// failure costs a second or two.
func oraclePage(t *testing.T, fails int) []byte {
	t.Helper()
	dir := t.TempDir()
	real, state := filepath.Join(dir, "real"), filepath.Join(dir, "state")
	for _, d := range []string{real, state} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	multi := nstest.Tool(t, "xtables-legacy-multi")
	for _, fam := range []string{"iptables", "ip6tables"} {
		for _, tool := range []string{"", "-save", "-restore"} {
			if err := os.Symlink(multi, filepath.Join(real, fam+tool)); err != nil {
				t.Fatal(err)
			}
			at := filepath.Join(dir, fam+tool)
			if tool == "-restore" {
				if err := os.WriteFile(at, []byte(failingRestore), 0o755); err != nil {
					t.Fatal(err)
				}
			} else if err := os.Symlink(multi, at); err != nil {
				t.Fatal(err)
			}
		}
	}
	page := filepath.Join(dir, "metrics.prom")
	args := append(oracle.Args(backend.IptablesLegacy, oracle.Options{Services: 3, IPv6: true}), "--metrics-out", page, "--resync", "1s")
	cmd := exec.Command(oracle.Binary(t, oracle.NewestWith(backend.IptablesLegacy)), args...)
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"REAL="+real, "STATE="+state, fmt.Sprintf("FAILS=%d", fails))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// It prints its synced line after writing the page, then stays.
	synced := make(chan struct{})
	go func() {
		for sc := bufio.NewScanner(out); sc.Scan(); {
			if strings.Contains(sc.Text(), "synced") {
				close(synced)
				break
			}
		}
		io.Copy(io.Discard, out)
	}()
	// kube-proxy's first sync runs from its EndpointSlices-synced handler,
	// outside the runner that retries failed syncs: after a failed first
	// sync the next one waits for a change. Deleting the canary chains is
	// one: kube-proxy's canary monitor (every sync period) sees the flush
	// and queues a sync, which the runner then retries every second.
	ok := false
	for deadline := time.Now().Add(time.Minute); !ok && time.Now().Before(deadline); {
		select {
		case <-synced:
			ok = true
		case <-time.After(1500 * time.Millisecond):
			for _, fam := range []string{"iptables", "ip6tables"} {
				for _, table := range []string{"mangle", "nat", "filter"} {
					exec.Command(filepath.Join(real, fam), "-w", "-t", table, "-X", "KUBE-PROXY-CANARY").Run()
				}
			}
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil || !ok {
		t.Fatalf("oracle %s (synced %v): %v\n%s", strings.Join(args, " "), ok, err, stderr.String())
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kube-proxy's own pages: a clean first sync has no failure series, and
// passes verify read live; a proxier whose first restores failed names the
// counter and ip_family exactly as kube-proxy counts them; and two such
// pages read in turn, one and three failures per family (two runs of the
// real proxier standing for two reads of one kube-proxy), fail verify with
// the finding for each family.
func TestOraclePagesSyncSignals(t *testing.T) {
	// The local kube-proxy endpoint listens on loopback, down in a new
	// namespace.
	if !nstest.Setup(t, "ip link set lo up", "xtables-legacy-multi", "ip") {
		return
	}
	clean, once, thrice := oraclePage(t, 0), oraclePage(t, 1), oraclePage(t, 3)

	f, _, err := kubeproxy.ParseFigures(once)
	if err != nil {
		t.Fatal(err)
	}
	want := []kubeproxy.FailureCount{
		{Counter: kubeproxy.FailIptablesRestore, IPFamily: "IPv4", Count: 1},
		{Counter: kubeproxy.FailIptablesRestore, IPFamily: "IPv6", Count: 1},
	}
	if !reflect.DeepEqual(f.Failures, want) || len(f.LastSync) != 2 {
		t.Errorf("real page after one failed restore per family: failures %v last sync %v, want %v and a sync per family", f.Failures, f.LastSync, want)
	}

	pages := func(ps ...[]byte) string {
		var reads atomic.Int32
		mux := http.NewServeMux()
		mux.HandleFunc("/proxyMode", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("iptables")) })
		mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
			w.Write(ps[min(int(reads.Add(1)), len(ps))-1])
		})
		return serve(t, mux.ServeHTTP).URL + "/proxyMode"
	}
	fake := healthyFake(t, backend.IptablesLegacy)
	// The pages are seconds old: verify's clock starts now and its 35s
	// wait between reads passes on the fake clock.
	clock := &fakeClock{now: time.Now()}
	res := run(t, clock.on(Options{Expect: backend.IptablesLegacy, Reader: fake, ProxyModeURL: pages(clean), Wait: 5 * time.Minute}))
	if res.Verdict != VerdictOK || res.KubeProxy == nil || len(res.KubeProxy.Failures) != 0 {
		t.Errorf("kube-proxy's clean page: verdict %s findings %v figures %+v notes %q, want ok", res.Verdict, res.Findings, res.KubeProxy, res.Notes)
	}

	clock = &fakeClock{now: time.Now()}
	res = run(t, clock.on(Options{Expect: backend.IptablesLegacy, Reader: fake, ProxyModeURL: pages(once, thrice), Wait: 5 * time.Minute}))
	if res.Verdict != VerdictFailed || kinds(res) != "kube-proxy-sync-failing@iptables-legacy,kube-proxy-sync-failing@iptables-legacy" {
		t.Fatalf("rising real pages: verdict %s findings %s, want a sync-failing finding per family", res.Verdict, kinds(res))
	}
	for _, fd := range res.Findings {
		if !strings.Contains(fd.Message, "kubeproxy_sync_proxy_rules_iptables_restore_failures_total 1 -> 3") {
			t.Errorf("%s finding %q, want the counter's rise", fd.Family, fd.Message)
		}
	}
}
