package switchover

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/faultinject"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// TestSwitchUnderFaults runs the real switch from iptables-legacy to
// iptables-nft (the fixture of TestSwitchBinaryInterrupted: a fake
// systemctl restarting RKE2 through the real apply, kube-proxy's rules
// loaded for real, in a network namespace of its own) and fails or kills
// it at each call it makes under the root, one at a time: the calls of a
// clean run, every step's journal write, the config's write and the node
// lock included, so a write added later is covered without editing this
// test. After each run the node must be whole by the switch's own means:
// a journal left is finished by `switch --resume`, or, when that fails,
// by `switch --rollback`; then the config is the original or the target
// byte for byte (with its mode), no journal is left, verify passes for
// the backend the config names, and every other file under the root that
// is not ours is as it was. Temp files left are reported as such.
func TestSwitchUnderFaults(t *testing.T) {
	if !faultinject.Supported {
		testhost.Unmet(t, "the fault-injection tracer runs on linux/amd64 only")
	}
	bin, ok := switchBinaryInNetns(t)
	if !ok {
		return
	}
	for _, tool := range []string{"iptables-legacy-restore", "iptables-nft-restore", "iptables-legacy-save", "iptables-nft-save"} {
		nstest.Tool(t, tool)
	}
	if out, err := exec.Command(nstest.Tool(t, "ip"), "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:10249")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "iptables") })}
	go srv.Serve(ln)
	defer srv.Close()

	run := func(fault *faultinject.Fault) (*fixture, *faultinject.Result, faultinject.Tree) {
		t.Helper()
		nstest.Flush(t, backend.IptablesLegacy, backend.IptablesNFT)
		f := newFixture(t, bin, false)
		before, err := faultinject.Snapshot(f.root)
		if err != nil {
			t.Fatal(err)
		}
		cmd := f.cmd("", "switch", "--to", "iptables-nft", "--timeout", "30s")
		cmd.Stdin = nil
		res, err := faultinject.Trace(cmd, []string{f.root}, fault, 3*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		f.settle()
		return f, res, before
	}
	clean, res, _ := run(nil)
	if res.Exit != 0 {
		t.Fatalf("clean switch: %s", res)
	}
	clean.ends(clean.target, bytes.NewBufferString(res.Stderr))
	// The journal's directory is synced for the write-config record and
	// the removal only: any other forward record a power cut undoes
	// leaves an earlier one, as good to resume or roll back from
	// (switchjournal.File.Write); every record's bytes are synced.
	dir := filepath.Join(clean.root, filepath.Dir(hostfs.SwitchJournal))
	var dirSyncs, renames int
	for _, c := range res.Calls {
		switch {
		case c.Class == "fsync" && c.Path == dir:
			dirSyncs++
		case c.Class == "rename" && c.Path == filepath.Join(clean.root, hostfs.SwitchJournal):
			renames++
		}
	}
	if dirSyncs != 2 || renames != 7 {
		t.Errorf("clean switch: %d syncs of %s, want 2 (write-config, removal); %d journal writes, want 7", dirSyncs, dir, renames)
	}
	faults := faultinject.Faults(res.Calls, os.Getenv("FAULTS_ALL") == "1")
	t.Logf("switch: %d calls under the root, %d faults", len(res.Calls), len(faults))
	var temps []string
	for _, fault := range faults {
		f, res, before := run(&fault)
		if res.Injected == nil {
			t.Errorf("%s: never reached\n%s", fault, res)
			continue
		}
		what := fault.String() + " (" + strings.ReplaceAll(res.Injected.String(), f.root, "") + ")"
		log := bytes.NewBufferString(what + ": " + res.String())
		// No journal: the switch never began (original) or it ended
		// (target, or original after a rollback), even when killed after.
		want := f.original
		switch {
		case f.journal() != nil:
			want = f.finish(log)
		case res.Exit == 0 || f.config() == f.target:
			want = f.target
		default:
			// The switch never began: the operator runs it again, and
			// that run removes what the killed one left.
			want = f.retry(log)
		}
		if want == "" {
			t.Errorf("%s: LOST: neither --resume nor --rollback finished the switch\n%s", what, log)
			continue
		}
		f.ends(want, log)
		after, err := faultinject.Snapshot(f.root)
		if err != nil {
			t.Fatal(err)
		}
		if d := before.Diff(after, f.ours); len(d) > 0 {
			t.Errorf("%s: files that are not the switch's changed: %v", what, d)
		}
		for _, tmp := range after.Temps() {
			temps = append(temps, what+": "+tmp)
		}
	}
	if len(temps) > 0 {
		t.Errorf("temp files left once the switch was finished (issue 31 item 11):\n%s", strings.Join(temps, "\n"))
	}
}

// config is the operator's config as it is now.
func (f *fixture) config() string {
	data, _ := os.ReadFile(filepath.Join(f.root, hostfs.ConfigFile))
	return string(data)
}

// retry runs the switch again, as an operator does after one that failed
// before it began. It returns the config the node must end with ("" when
// the retry failed).
func (f *fixture) retry(log *bytes.Buffer) string {
	out, err := f.cmd("", "switch", "--to", "iptables-nft", "--timeout", "30s").CombinedOutput()
	fmt.Fprintf(log, "\nswitch --to iptables-nft (again): %v\n%s", err, out)
	f.settle()
	if err != nil {
		return ""
	}
	return f.target
}

// finish ends a switch a journal says is unfinished, as an operator
// would: --resume, then --rollback when that fails. It returns the config
// the node must end with ("" when neither worked).
func (f *fixture) finish(log *bytes.Buffer) string {
	out, err := f.cmd("", "switch", "--resume", "--timeout", "30s").CombinedOutput()
	fmt.Fprintf(log, "\nswitch --resume: %v\n%s", err, out)
	f.settle()
	if err == nil {
		return f.target
	}
	out, err = f.cmd("", "switch", "--rollback", "--timeout", "30s").CombinedOutput()
	fmt.Fprintf(log, "\nswitch --rollback: %v\n%s", err, out)
	f.settle()
	if err == nil {
		return f.original
	}
	return ""
}

// ours says which files under the root the switch (and the apply and
// kube-proxy it restarts) may change: the operator's config (ends checks
// it), RKE2's drop-in, the tool's state, the fake's record of modules.
func (f *fixture) ours(rel string) bool {
	p := "/" + rel
	// The generator's directories are rewritten at every daemon-reload
	// (the fixture's systemctl runs the real generator), as systemd does.
	for _, dir := range []string{hostfs.RunDir, filepath.Dir(hostfs.SwitchJournal), filepath.Dir(hostfs.ConfigFile), "/etc/rancher/rke2/config.yaml.d",
		"/run/systemd/generator", "/run/systemd/generator.early", "/run/systemd/generator.late"} {
		// The directory, what is in it, and the parents it may create.
		if strings.HasPrefix(p, dir+"/") || strings.HasPrefix(dir+"/", p+"/") {
			return true
		}
	}
	return faultinject.IsTemp(filepath.Base(p))
}
