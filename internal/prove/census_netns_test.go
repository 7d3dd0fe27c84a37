package prove

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/census"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
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
	var mu sync.Mutex
	var lines []string
	var stored []*census.Census
	r := &censusRounds{interval: 50 * time.Millisecond,
		take: func(ctx context.Context) (*census.Census, error) {
			return census.Take(ctx, census.Options{PIDs: func(p int) bool { return p == pid }, MaxNamespaces: CensusMaxNamespaces})
		},
		store: func(c *census.Census, _ time.Duration, _ time.Time) error {
			mu.Lock()
			defer mu.Unlock()
			stored = append(stored, c)
			return nil
		},
		log: func(l string) { mu.Lock(); defer mu.Unlock(); lines = append(lines, l) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.run(ctx) }()
	defer func() { cancel(); <-done }()

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
	if len(lines) != 1 || !strings.Contains(lines[0], "can move to a kernel without legacy xtables: no") || !strings.Contains(lines[0], fmt.Sprintf("pid %d", pid)) {
		t.Errorf("journal %q: want one line saying no and naming pid %d", lines, pid)
	}
	if m := string(proof.CensusMetrics(stored[0], time.Millisecond, time.Now())); !strings.Contains(m, "rke2_proxy_backend_legacy_free 0\n") {
		t.Errorf("stored census as metrics:\n%s", m)
	}
	mu.Unlock()

	nstest.Sh(t, fmt.Sprintf("nsenter -t %d -n iptables-legacy -w -F INPUT", pid))
	waitValue("yes")
	time.Sleep(200 * time.Millisecond) // a few more rounds, which say nothing new
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 2 || !strings.Contains(lines[1], "legacy xtables: yes") {
		t.Errorf("journal %q: want a second line saying yes, and no more", lines)
	}
	if !slices.ContainsFunc(stored, func(c *census.Census) bool { return c.LegacyFree }) {
		t.Error("no legacy-free census stored")
	}
}
