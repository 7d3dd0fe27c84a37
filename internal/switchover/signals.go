package switchover

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// interrupts turns SIGTERM and SIGINT into the switch's two cancels: the
// first cancels ctx, the switch's (Run rolls back), any later one rctx,
// the rollback's (it stops where it is, journaled). Each is said on log.
// stop lets go of the signals and of both contexts.
func interrupts(parent context.Context, log io.Writer) (ctx, rctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	rctx, rcancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		n := 0
		for sig := range sigs {
			n++
			if n == 1 {
				fmt.Fprintf(log, "rke2-proxy-backend: switch: %s: stopping; a switch past its config write rolls back (another signal stops the rollback where it is, journaled)\n", sig)
				cancel(fmt.Errorf("interrupted by %s", sig))
				continue
			}
			fmt.Fprintf(log, "rke2-proxy-backend: switch: %s again: stopping the rollback where it is\n", sig)
			rcancel(fmt.Errorf("interrupted again by %s", sig))
		}
	}()
	return ctx, rctx, func() {
		signal.Stop(sigs)
		rcancel(nil)
		cancel(nil)
	}
}
