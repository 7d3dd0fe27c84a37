package apply_test

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// TestConcurrentAppliesNeverLoseTheDropIn starts many real apply processes
// at once (rke2-server and rke2-agent both run apply; an operator may run
// one by hand during a start), alternating the backend. Without one writer
// at a time, one run's temp cleanup deleted another's temp and the give-up
// path then removed the drop-in the other had just written. A watcher reads
// the drop-in all along: it must never be missing or partial, and at the
// end it must be one of the two complete versions, with no temp left.
func TestConcurrentAppliesNeverLoseTheDropIn(t *testing.T) {
	backends := []string{"iptables-legacy", "iptables-nft"}
	dropIn := rke2.DropInPath(hostfs.RKE2ConfigFile)
	complete := map[string]bool{}
	for _, b := range backends {
		h := killHost(t)
		if out, err := applyCmd(h.Dir(), b).CombinedOutput(); err != nil {
			t.Fatalf("apply --backend=%s: %v\n%s", b, err, out)
		}
		data, err := os.ReadFile(h.Root().Path(dropIn))
		if err != nil {
			t.Fatal(err)
		}
		complete[string(data)] = true
	}

	const runs, rounds = 24, 3
	h := killHost(t)
	if out, err := applyCmd(h.Dir(), backends[0]).CombinedOutput(); err != nil {
		t.Fatalf("first apply: %v\n%s", err, out)
	}
	for round := 0; round < rounds; round++ {
		var bad atomic.Value
		stop := make(chan struct{})
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			for {
				select {
				case <-stop:
					return
				default:
				}
				data, err := os.ReadFile(h.Root().Path(dropIn))
				if err != nil || !complete[string(data)] {
					bad.CompareAndSwap(nil, "drop-in missing or partial during concurrent applies: "+errString(err)+"\n"+string(data))
				}
			}
		}()
		var wg sync.WaitGroup
		outs := make([]bytes.Buffer, runs)
		errs := make([]error, runs)
		for i := 0; i < runs; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				cmd := applyCmd(h.Dir(), backends[i%2])
				cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
				errs[i] = cmd.Run()
			}(i)
		}
		wg.Wait()
		close(stop)
		<-watched
		for i, err := range errs {
			if err != nil || strings.Contains(outs[i].String(), "warning: cannot honour") {
				t.Fatalf("round %d run %d: %v\n%s", round, i, err, outs[i].String())
			}
		}
		if v := bad.Load(); v != nil {
			t.Fatalf("round %d: %s", round, v)
		}
		data, err := os.ReadFile(h.Root().Path(dropIn))
		if err != nil || !complete[string(data)] {
			t.Fatalf("round %d: after %d concurrent applies the drop-in is %q, %v", round, runs, data, err)
		}
		for _, dir := range []string{"/etc/rancher/rke2/config.yaml.d", hostfs.RunDir} {
			entries, _ := os.ReadDir(h.Root().Path(dir))
			for _, e := range entries {
				if strings.Contains(e.Name(), ".tmp-") {
					t.Errorf("round %d: temp %s/%s left behind", round, dir, e.Name())
				}
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "complete file expected"
	}
	return err.Error()
}
