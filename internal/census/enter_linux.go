package census

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
)

// enter reads the namespace f names from inside: on a goroutine locked to
// its thread, which joins the namespace with setns and is never unlocked,
// so the Go runtime ends that thread with the goroutine instead of handing
// a thread in a pod's namespace to other code. The readers make their
// sockets on the calling thread (sockets belong to the namespace they were
// made in) and start no goroutines there.
func enter(ctx context.Context, f *os.File, n *Namespace) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			n.Error = fmt.Sprintf("entering its network namespace: %v", err)
			return
		}
		readHere(ctx, n)
	}()
	<-done
}

// readHere reads the calling thread's namespace into n. Only the host's
// read may dump nftables over several sockets (their goroutines run on
// other threads, every one of which is in the host's namespace: the
// threads that entered a pod's died with their goroutine).
func readHere(ctx context.Context, n *Namespace) {
	tables, err := netfilter.LegacyHere()
	if err != nil {
		n.Error = err.Error()
		return
	}
	n.Legacy, n.EmptyLegacy = legacyTables(tables)
	compat, err := netfilter.NFTCompat(ctx, n.Host)
	if err != nil {
		n.Error = err.Error()
		return
	}
	n.NFTCompat = compat
}
