package sleep

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Ctx ends with its context, not after d, and returns at once for d <= 0.
func TestCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	start := time.Now()
	if err := Ctx(ctx, time.Hour); !errors.Is(err, context.Canceled) || time.Since(start) > 10*time.Second {
		t.Errorf("Ctx(cancelled, 1h) = %v after %s", err, time.Since(start))
	}
	if err := Ctx(context.Background(), 0); err != nil {
		t.Errorf("Ctx(0) = %v", err)
	}
	if err := Ctx(ctx, -time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("Ctx(cancelled, -1s) = %v, want the context's error", err)
	}
	start = time.Now()
	if err := Ctx(context.Background(), 30*time.Millisecond); err != nil || time.Since(start) < 30*time.Millisecond {
		t.Errorf("Ctx(30ms) = %v after %s", err, time.Since(start))
	}
}
