package apply_test

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// childEnv makes the test binary run the CLI instead of the tests, so the
// kill test can SIGKILL a real apply process.
const childEnv = "APPLY_KILL_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(cli.Main(append([]string{"rke2-proxy-backend"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const operatorYAML = "token: secret\nkube-proxy-arg:\n  - metrics-bind-address=0.0.0.0:10249\n"

// killHost is a node with every module already loaded, so apply does no
// modprobe and the kill points fall on probing, rendering and writing.
func killHost(t *testing.T) *testhost.Host {
	return testhost.New(t).Debian12().RKE2Unit("tarball", "server").
		LoadedModules(legacyAndNFT()...).
		RKE2Config("config.yaml", operatorYAML)
}

func legacyAndNFT() []string {
	return []string{
		"x_tables", "ip_tables", "iptable_filter", "iptable_nat", "iptable_mangle", "ip6_tables", "ip6table_filter",
		"ip6table_nat", "ip6table_mangle", "nf_nat", "nf_conntrack", "ipt_REJECT", "ip6t_REJECT", "nf_tables",
		"nft_compat", "nft_chain_nat", "nft_counter", "xt_comment", "xt_conntrack", "xt_mark", "xt_addrtype",
		"xt_statistic", "xt_recent", "xt_nat", "xt_MASQUERADE", "xt_tcpudp",
	}
}

func applyCmd(root, b string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "--root", root, "apply", "--backend="+b)
	cmd.Env = append(os.Environ(), childEnv+"=1", "SYSTEMD_IN_INITRD=")
	return cmd
}

// TestKillApplyAtRandomPoints SIGKILLs apply at random moments, alternating
// the backend so that a torn write would show: the drop-in must always be
// absent or one of the two complete versions, the plan absent or valid
// JSON, and the operator's config.yaml untouched.
func TestKillApplyAtRandomPoints(t *testing.T) {
	backends := []string{"iptables-legacy", "iptables-nft"}
	dropIn := rke2.DropInPath(hostfs.RKE2ConfigFile)

	// The complete drop-in for each backend, and how long a warm run takes.
	complete := map[string]bool{}
	full := time.Hour
	for _, b := range backends {
		h := killHost(t)
		for i := 0; i < 3; i++ {
			start := time.Now()
			if out, err := applyCmd(h.Dir(), b).CombinedOutput(); err != nil {
				t.Fatalf("apply --backend=%s: %v\n%s", b, err, out)
			}
			full = min(full, time.Since(start))
		}
		data, err := os.ReadFile(h.Root().Path(dropIn))
		if err != nil {
			t.Fatal(err)
		}
		complete[string(data)] = true
	}

	h := killHost(t)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	iterations, killed := 200, 0
	if testing.Short() {
		iterations = 30
	}
	for i := 0; i < iterations; i++ {
		cmd := applyCmd(h.Dir(), backends[i%2])
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int63n(int64(full) * 2)))
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		} else if err != nil {
			t.Fatalf("run %d exited with %v:\n%s", i, err, out.String())
		}

		if data, err := os.ReadFile(h.Root().Path(dropIn)); err == nil {
			if !complete[string(data)] {
				t.Fatalf("run %d left a partial drop-in:\n%s", i, data)
			}
		} else if !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(h.Root().Path(hostfs.PlanFile)); err == nil {
			var p plan.Plan
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatalf("run %d left a partial plan: %v\n%s", i, err, data)
			}
		}
		if data, _ := os.ReadFile(h.Root().Path(hostfs.RKE2ConfigFile)); string(data) != operatorYAML {
			t.Fatalf("run %d changed the operator's config.yaml:\n%s", i, data)
		}
		entries, _ := os.ReadDir(filepath.Dir(h.Root().Path(dropIn)))
		for _, e := range entries {
			// RKE2 reads only *.yaml / *.yml: a leftover temp file is harmless.
			if e.Name() != rke2.DropInName && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
				t.Fatalf("run %d left %s, which RKE2 would read", i, e.Name())
			}
		}
	}
	// The next whole run cleans what the killed ones left (temps of the
	// drop-in and of plan.json), holding the lock so no live writer's temp
	// can be among them.
	if out, err := applyCmd(h.Dir(), backends[0]).CombinedOutput(); err != nil {
		t.Fatalf("apply after the kills: %v\n%s", err, out)
	}
	for _, dir := range []string{filepath.Dir(dropIn), hostfs.RunDir} {
		entries, _ := os.ReadDir(h.Root().Path(dir))
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("%s/%s left by a killed run survived the next apply", dir, e.Name())
			}
		}
	}
	t.Logf("%d runs, %d killed before finishing (a full run takes %v)", iterations, killed, full)
	if killed == 0 {
		t.Error("no run was killed: the kill points never fell inside apply")
	}
}
