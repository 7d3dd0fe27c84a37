package apply

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/kmodtest"
)

// apply returns within its limit even when modprobe hangs with a child
// holding stderr (the test's short deadline stands in for the 30 s per
// module); before, it waited for the child to exit.
func TestApplyReturnsWhenModprobeHangsWithAChild(t *testing.T) {
	h := debianHost(t).AvailableModules(backend.IptablesNFT.Modules()...)
	kmodtest.InstallScript(t, h.Dir(), kmodtest.HangingWithChild)
	const limit = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	var log strings.Builder
	o := Options{Root: h.Root(), RKE2Config: hostfs.RKE2ConfigFile, Stdout: &log,
		Log: func(f string, a ...any) { log.WriteString(f + "\n") }}
	start := time.Now()
	res, _ := Run(ctx, o, input(h, decision(backend.IptablesNFT)))
	if took := time.Since(start); took > limit+10*time.Second {
		t.Fatalf("apply took %s with a %s limit", took, limit)
	}
	if len(res.Plan.ModulesMissing) == 0 {
		t.Errorf("no module reported missing after modprobe was killed: %+v\n%s", res.Plan, log.String())
	}
}
