package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A misspelt condition must fail the script, not skip it: before, [!netn]
// read as "not netn", which is always true, and skipped the script on
// every machine, CI included.
func TestUnknownConditionFailsTheScript(t *testing.T) {
	dir := t.TempDir()
	script := "[!netn] skip 'the typo must not skip'\nexec true\n"
	if err := os.WriteFile(filepath.Join(dir, "typo.txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recordingT{}
	rec.Run("scripts", func(st testscript.T) { runScripts(st, params(dir)) })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.skipped {
		t.Fatalf("a script with a misspelt condition was skipped; log:\n%s", rec.log.String())
	}
	if !rec.failed || !strings.Contains(rec.log.String(), `unknown condition "netn"`) {
		t.Fatalf("failed = %v, want a failure naming the unknown condition; log:\n%s", rec.failed, rec.log.String())
	}
	// The real names are known.
	for _, c := range []string{"root", "netns", "bash-completion"} {
		if _, _, err := prerequisite(c); err != nil {
			t.Errorf("prerequisite(%q): %v", c, err)
		}
	}
}

// Under CI=true a script that would skip fails, naming what it lacked: an
// exec:NAME condition (which testscript answers itself; Setup reads them),
// negated or not, whose program is not on PATH, and a bare skip. Without
// CI the first and the last skip, and the middle one skips its line.
func TestSkipsFailUnderCI(t *testing.T) {
	const tool = "rke2-proxy-backend-no-such-tool"
	scripts := map[string]string{
		"missing_tool": "[!exec:" + tool + "] skip 'needs a tool nobody has'\nexec true\n",
		"tool_line":    "exec true\n[short] [exec:" + tool + "] exec " + tool + "\n",
		"bare_skip":    "skip 'not today'\nexec true\n",
	}
	underCI := map[string]string{
		"missing_tool": "missing_tool.txtar:1: [exec:" + tool + "] is not met: " + tool + " is not on PATH; CI=true",
		"tool_line":    "tool_line.txtar:2: [exec:" + tool + "] is not met",
		"bare_skip":    "the script skipped under CI=true, and CI must meet every prerequisite rather than skip: not today",
	}
	for name, script := range scripts {
		for _, ci := range []string{"", "true"} {
			t.Setenv("CI", ci)
			rec := runOne(t, name, script)
			switch {
			case ci == "true" && (!rec.failed || !strings.Contains(rec.log.String(), underCI[name])):
				t.Errorf("CI=true: %s: failed %v, want a failure saying %q; log:\n%s", name, rec.failed, underCI[name], rec.log.String())
			case ci == "" && (rec.failed || rec.skipped != (name != "tool_line")):
				t.Errorf("without CI: %s: failed %v, skipped %v; log:\n%s", name, rec.failed, rec.skipped, rec.log.String())
			}
		}
	}
}

// runOne runs script as NAME.txtar, alone, as TestScripts would.
func runOne(t *testing.T, name, script string) *recordingT {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name+".txtar"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recordingT{}
	rec.Run("scripts", func(st testscript.T) { runScripts(st, params(dir)) })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec
}

const childScripts = "TESTSCRIPTS_CHILD_SCRIPTS"

// [!root] and [!netns] skip a script on a machine where the tests do not
// run as root, and fail it under CI=true naming the condition. The scripts
// run in a child test binary, as nobody (setpriv) when this one is root.
func TestUnmetConditionsFailUnderCI(t *testing.T) {
	if dir := os.Getenv(childScripts); dir != "" {
		runScripts(goT{t}, params(dir))
		return
	}
	shared := t.TempDir() // readable by nobody: the child's binary and scripts
	for _, d := range []string{filepath.Dir(shared), shared} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	scripts := filepath.Join(shared, "scripts")
	for name, script := range map[string]string{
		"root.txtar":  "[!root] skip 'needs root'\nexec true\n",
		"netns.txtar": "[!netns] skip 'needs a network namespace'\nexec true\n",
	} {
		write(t, filepath.Join(scripts, name), script, 0o644)
	}
	var argv []string
	bin := os.Args[0]
	uid := os.Geteuid()
	if uid == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			testhost.Unmet(t, "running the scripts as nobody needs setpriv (util-linux)")
		}
		uid = 65534
		argv = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"}
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(shared, "testscripts.test")
		write(t, bin, string(data), 0o755)
	}
	argv = append(argv, bin, "-test.run=^TestUnmetConditionsFailUnderCI$", "-test.v", "-test.count=1")
	const sub = "--- %s: TestUnmetConditionsFailUnderCI/"
	for ci, want := range map[string][]string{
		"": {fmt.Sprintf(sub, "SKIP") + "root", fmt.Sprintf(sub, "SKIP") + "netns"},
		"true": {fmt.Sprintf(sub, "FAIL") + "root", fmt.Sprintf(`bad condition "root": condition [root] is not met: not running as root (uid %d); CI=true`, uid),
			fmt.Sprintf(sub, "FAIL") + "netns", fmt.Sprintf(`bad condition "netns": condition [netns] is not met: a network namespace needs root, and this runs as uid %d; CI=true`, uid)},
	} {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "CI="+ci, childScripts+"="+scripts, "TMPDIR="+os.TempDir())
		out, err := cmd.CombinedOutput()
		if (ci == "true") != (err != nil) {
			t.Errorf("CI=%q: the child exited %v:\n%s", ci, err, out)
		}
		for _, w := range want {
			if !strings.Contains(string(out), w) {
				t.Errorf("CI=%q: the child did not say %q:\n%s", ci, w, out)
			}
		}
	}
}

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

// recordingT is a testscript.T that records a failure or skip instead of
// reporting it, so a test can assert that a script fails. Each Run runs
// in its own goroutine, as testing does, so FailNow and Skip can end it.
type recordingT struct {
	mu      sync.Mutex
	log     strings.Builder
	failed  bool
	skipped bool
}

func (r *recordingT) Log(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(&r.log, args...)
}

func (r *recordingT) Fatal(args ...any) { r.Log(args...); r.FailNow() }

func (r *recordingT) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recordingT) Skip(args ...any) {
	r.Log(args...)
	r.mu.Lock()
	r.skipped = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recordingT) Parallel() {}

func (r *recordingT) Verbose() bool { return false }

func (r *recordingT) Run(_ string, f func(testscript.T)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}
