package faultinject

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
)

// TestVerifyUnderFaults runs verify, in a network namespace of its own, on
// a node whose last verify passed and whose rules were then all flushed,
// and fails or kills it at each call it makes under the root (the calls
// of a clean run: the run mark, status.json, the textfile metrics), one at
// a time; and makes the filesystem read-only from each call on (EROFS at
// every later call). After each run:
//   - verify did not exit 0;
//   - check does not answer 0: status.json never keeps the last OK after
//     a run that could not replace it (issue 31 item 9). Two runs are
//     not failed runs a file can show: one killed at its first call
//     (it had judged and changed nothing, as one killed before it
//     started: every file must be as it was), and one whose directory
//     is read-only to it alone from its first call on (here EROFS from
//     the run mark's creation; on a node a sandbox or an LSM denying
//     verify only), which must say the old result still stands;
//   - the operator's files are byte for byte what they were;
//   - the next, clean verify stores a failing result (check 1), clears
//     the mark and leaves no temp file of ours.
func TestVerifyUnderFaults(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	bin := cliLink(t)
	for _, tool := range []string{"iptables-nft-restore", "iptables-nft-save", "iptables-legacy-save", "nft", "ip"} {
		nstest.Tool(t, tool)
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v\n%s", err, out)
	}
	// kube-proxy's /proxyMode, in this namespace.
	ln, err := net.Listen("tcp", "127.0.0.1:10249")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "iptables") })}
	go srv.Serve(ln)
	defer srv.Close()

	template := t.TempDir()
	for p, data := range map[string]string{
		"proc/sys/kernel/osrelease":                       "6.12.0\n",
		"proc/net/ip_tables_names":                        "",
		"usr/local/lib/systemd/system/rke2-agent.service": "[Service]\nType=notify\n",
		hostfs.ConfigFile:                                 "# the operator's\nbackend: iptables-nft\n",
		hostfs.TextfileDir + "/node.prom":                 "# the node's own textfile\n",
	} {
		put(t, filepath.Join(template, p), data)
	}
	cli := func(root string, args ...string) (int, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"RKE2_PROXY_BACKEND_ROOT=" + root, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
		out, err := cmd.CombinedOutput()
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	if code, out := cli(template, "apply", "--modprobe", "/bin/true"); code != 0 {
		t.Fatalf("apply: %s", out)
	}
	nstest.Sh(t, fmt.Sprintf("%s render expected --backend iptables-nft --family ipv4 | grep -v -e KUBE-IPTABLES-HINT -e KUBE-KUBELET-CANARY | iptables-nft-restore -w 5", bin))
	if code, out := cli(template, "verify", "--wait", "10s"); code != 0 {
		t.Fatalf("verify on the whole rules: %s", out)
	}
	if code, out := cli(template, "check"); code != 0 {
		t.Fatalf("check after a passing verify: %s", out)
	}
	// Every rule flushed: the next verify must fail.
	nstest.Sh(t, "nft flush ruleset")
	before := snapshot(t, template)
	ours := func(rel string) bool {
		rel = "/" + rel
		return strings.HasPrefix(rel, hostfs.RunDir+"/") || rel == hostfs.TextfileDir+"/rke2_proxy_backend.prom" || IsTemp(filepath.Base(rel))
	}
	verify := func(root string, f *Fault) *Result {
		t.Helper()
		cmd := exec.Command(bin, "verify", "--wait", "0s")
		cmd.Env = []string{"RKE2_PROXY_BACKEND_ROOT=" + root, "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C"}
		res, err := Trace(cmd, []string{root}, f, 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	cleanRoot := copyRoot(t, template)
	clean := verify(cleanRoot, nil)
	if clean.Exit != 1 {
		t.Fatalf("clean run on flushed rules: %s", clean)
	}
	faults := Faults(clean.Calls, os.Getenv("FAULTS_ALL") == "1")
	for _, c := range clean.Calls {
		faults = append(faults, Fault{Class: c.Class, N: c.N, Errno: syscall.EROFS, Sticky: true})
	}
	t.Logf("verify: %d calls under the root, %d faults", len(clean.Calls), len(faults))
	for _, f := range faults {
		root := copyRoot(t, template)
		res := verify(root, &f)
		if res.Injected == nil {
			t.Errorf("%s: never reached\n%s", f, res)
			continue
		}
		what := f.String() + " (" + strings.ReplaceAll(res.Injected.String(), root, "") + ")"
		if res.Exit == 0 {
			t.Errorf("%s: verify exited 0 on flushed rules\n%s", what, res)
		}
		code, out := cli(root, "check")
		// Until its mark is in place (its first calls make the mark under
		// a temporary name and link it), a kill is a run that had changed
		// and judged nothing yet (as one killed before it started), and a
		// filesystem read-only from there on lets it change nothing.
		atFirst := !marked(clean.Calls, f)
		switch {
		case atFirst && f.Kill:
			// (the mark's temporary file aside: the next run removes it)
			if d := before.Diff(snapshot(t, root), func(rel string) bool { return IsTemp(filepath.Base(rel)) }); len(d) > 0 {
				t.Errorf("%s: killed before its first call, yet files changed: %v", what, d)
			}
		case atFirst && f.Sticky:
			if !strings.Contains(res.Stderr, "status.json still shows an earlier run's result") {
				t.Errorf("%s: verify could change nothing and did not say the old result stands\n%s", what, res)
			}
		case code == 0:
			t.Errorf("%s: check answers 0 after a failed verify: %s%s", what, out, res)
		}
		if d := before.Diff(snapshot(t, root), ours); len(d) > 0 {
			t.Errorf("%s: operator files changed: %v", what, d)
		}
		next := verify(root, nil)
		code, out = cli(root, "check")
		if next.Exit != 1 || code != 1 {
			t.Errorf("%s: the next verify exited %d, check %d (%s); want 1 and 1\n%s", what, next.Exit, code, out, next)
		}
		tree := snapshot(t, root)
		if temps := tree.Temps(); len(temps) > 0 {
			t.Errorf("%s: temp files left after the next verify: %v", what, temps)
		}
		if _, ok := tree[strings.TrimPrefix(hostfs.VerifyPending, "/")]; ok {
			t.Errorf("%s: the next verify left its run mark", what)
		}
	}
}

func put(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// marked says whether verify's run mark was in place when fault f struck:
// a call after the one that links the mark at its path (hostfs.BeginPending).
func marked(calls []Call, f Fault) bool {
	for _, c := range calls {
		if c.Class == f.Class && c.N == f.N {
			return false
		}
		if c.Name == "linkat" && strings.HasSuffix(c.Path, hostfs.VerifyPending) {
			return true
		}
	}
	return true
}
