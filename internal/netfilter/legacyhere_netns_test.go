package netfilter

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// TestLegacyTablesOfCallingThread: a thread that entered a network
// namespace holding a legacy table sees that table, though the process's
// main thread sits in a namespace with none: the list is the calling
// thread's (/proc/thread-self/net), as the socket that then reads it is.
func TestLegacyTablesOfCallingThread(t *testing.T) {
	if !nstest.Setup(t, "", "iptables-legacy") {
		return
	}
	if main, err := os.ReadFile("/proc/self/net/ip_tables_names"); err == nil && len(strings.Fields(string(main))) > 0 {
		t.Fatalf("the test's fresh namespace already lists legacy tables %q", main)
	}
	type result struct {
		live, here []string
		err        error
	}
	done := make(chan result)
	go func() {
		// Never unlocked: the thread ends with this goroutine, and the
		// namespace it entered with it.
		runtime.LockOSThread()
		var r result
		defer func() { done <- r }()
		if r.err = unix.Unshare(unix.CLONE_NEWNET); r.err != nil {
			return
		}
		// A child forked from this thread runs in its namespace.
		if out, err := exec.Command("iptables-legacy", "-w", "-t", "filter", "-N", "THREAD-HERE").CombinedOutput(); err != nil {
			r.err = fmt.Errorf("iptables-legacy -N THREAD-HERE in the thread's namespace: %w\n%s", err, out)
			return
		}
		if r.live, r.err = liveLegacyTables(hostfs.IPTablesNames, []byte("filter\nnat\n")); r.err != nil {
			return
		}
		tables, err := LegacyHere()
		for _, tb := range tables {
			r.here = append(r.here, string(tb.Family)+" "+tb.Name)
		}
		r.err = err
	}()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !slices.Equal(r.live, []string{"filter"}) {
		t.Errorf("liveLegacyTables on the thread in the namespace with a filter table = %q, want [filter]", r.live)
	}
	if !slices.Equal(r.here, []string{"ipv4 filter"}) {
		t.Errorf("LegacyHere on the thread in the namespace with a filter table = %q, want [ipv4 filter]", r.here)
	}
}
