package prove

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/apiserver"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// watch's census rounds on real namespaces: a pod's legacy rule makes the
// node not legacy-free (the value the Node update carries, a journal line,
// the textfile's series); once the rule is gone the next round says yes,
// and says so once.
func TestCensusRoundsNetns(t *testing.T) {
	if !nstest.Setup(t, "", "unshare", "nsenter", "iptables-legacy") {
		return
	}
	pid := nstest.Sleeper(t, "iptables-legacy -w -A INPUT -j ACCEPT -m comment --comment pod")
	var rec roundsRecord
	mu := &rec.mu
	r := rec.rounds(func(ctx context.Context) (*census.Census, error) {
		return census.Take(ctx, census.Options{PIDs: func(p int) bool { return p == pid }, MaxNamespaces: CensusMaxNamespaces})
	})
	runRounds(t, r)

	waitValue := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for r.value() != want {
			if time.Now().After(deadline) {
				t.Fatalf("census value %q, want %q", r.value(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitValue("no; namespaces=1")
	mu.Lock()
	if len(rec.lines) != 1 || !strings.Contains(rec.lines[0], "can move to a kernel without legacy xtables: no") || !strings.Contains(rec.lines[0], fmt.Sprintf("pid %d", pid)) {
		t.Errorf("journal %q: want one line saying no and naming pid %d", rec.lines, pid)
	}
	if m := string(proof.CensusMetrics(rec.stored[0], time.Millisecond, time.Now())); !strings.Contains(m, "rke2_proxy_backend_legacy_free 0\n") {
		t.Errorf("stored census as metrics:\n%s", m)
	}
	mu.Unlock()

	nstest.Sh(t, fmt.Sprintf("nsenter -t %d -n iptables-legacy -w -F INPUT", pid))
	waitValue("yes")
	time.Sleep(200 * time.Millisecond) // a few more rounds, which say nothing new
	mu.Lock()
	defer mu.Unlock()
	if len(rec.lines) != 2 || !strings.Contains(rec.lines[1], "legacy xtables: yes") {
		t.Errorf("journal %q: want a second line saying yes, and no more", rec.lines)
	}
	if !slices.ContainsFunc(rec.stored, func(c *census.Census) bool { return c.LegacyFree }) {
		t.Error("no legacy-free census stored")
	}
}

// watch's census rounds name pods with the kubelet's credentials against a
// real kube-apiserver: one request of the node's pod list a round, the
// pod's namespace/name in the journal line and the stored census; once the
// credentials are gone, the rounds go on by UID and say why once.
func TestCensusRoundsNamePodsNetns(t *testing.T) {
	if !nstest.Setup(t, "ip link set lo up", "unshare", "ip", "iptables-legacy") {
		return
	}
	api := apiserver.Start(t)
	api.RegisterNode("node-a")
	uid := api.CreatePod("istio-demo", "legacy-sidecar", "node-a", nil)
	pid := nstest.Sleeper(t, "iptables-legacy -w -A INPUT -j ACCEPT -m comment --comment pod")
	nstest.InPod(t, pid, uid, "4f1e2d")
	h := testhost.New(t).File("/etc/rancher/rke2/config.yaml", "node-name: node-a\n")
	api.InstallRKE2Agent(h.Dir(), "node-a")

	var rec roundsRecord
	mu := &rec.mu
	var requests []int
	r := rec.rounds(func(ctx context.Context) (*census.Census, error) {
		return census.Take(ctx, census.Options{PIDs: func(p int) bool { return p == pid }})
	})
	r.name = func(ctx context.Context, c *census.Census) int {
		n := proof.NamePods(ctx, h.Root(), distro.RKE2, c)
		mu.Lock()
		defer mu.Unlock()
		requests = append(requests, n)
		return n
	}
	runRounds(t, r)
	waitStored := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			got := len(rec.stored)
			mu.Unlock()
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d rounds stored, want %d", got, n)
			}
		}
	}
	waitStored(3)
	mu.Lock()
	named := "pod istio-demo/legacy-sidecar (uid " + uid
	if len(rec.lines) != 1 || !strings.Contains(rec.lines[0], named) || !strings.Contains(rec.lines[0], "1 API requests") {
		t.Errorf("journal %q: want one line naming %q after 1 API request", rec.lines, named)
	}
	if c := rec.stored[0]; !c.PodNames || len(c.HeldBackBy) != 1 || c.HeldBackBy[0].PodName != "legacy-sidecar" {
		t.Errorf("stored census: pod_names %v, held back by %+v; want the pod named", c.PodNames, c.HeldBackBy)
	}
	if slices.ContainsFunc(requests, func(n int) bool { return n != 1 }) {
		t.Errorf("requests per round %v, want 1 each", requests)
	}
	rounds := len(rec.stored)
	mu.Unlock()

	if err := os.Remove(filepath.Join(h.Dir(), hostfs.RKE2DataDir, proof.KubeletKubeconfig)); err != nil {
		t.Fatal(err)
	}
	waitStored(rounds + 3)
	mu.Lock()
	defer mu.Unlock()
	if len(rec.lines) != 2 || !strings.HasPrefix(rec.lines[1], "census: pods named by UID only: the node's pods could not be listed: the kubelet's credentials") {
		t.Errorf("journal %q: want one more line saying why pods go by UID, and no more", rec.lines)
	}
	if c := rec.stored[len(rec.stored)-1]; c.PodNames || c.Verdict != census.No || c.HeldBackBy[0].PodUID != uid || c.HeldBackBy[0].PodName != "" {
		t.Errorf("last census: pod_names %v, verdict %s, held back by %+v; want no, by UID", c.PodNames, c.Verdict, c.HeldBackBy)
	}
}

// roundsRecord keeps what census rounds stored and logged, for a test to
// read under mu.
type roundsRecord struct {
	mu     sync.Mutex
	lines  []string
	stored []*census.Census
}

// rounds are census rounds every 50 ms of take, recorded in rec.
func (rec *roundsRecord) rounds(take func(context.Context) (*census.Census, error)) *censusRounds {
	return &censusRounds{interval: 50 * time.Millisecond, take: take,
		store: func(c *census.Census, _ time.Duration, _ time.Time) error {
			rec.mu.Lock()
			defer rec.mu.Unlock()
			rec.stored = append(rec.stored, c)
			return nil
		},
		log: func(l string) { rec.mu.Lock(); defer rec.mu.Unlock(); rec.lines = append(rec.lines, l) },
	}
}

// runRounds runs r until the test ends.
func runRounds(t *testing.T, r *censusRounds) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}
