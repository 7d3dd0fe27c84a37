// Package testscripts runs the CLI end to end: each testdata/*.txtar is a
// script named after the subcommand it exercises, with its fixture host root
// and golden output inside the archive. UPDATE_GOLDEN=1 rewrites the
// archive's files a cmp found different, as internal/testkit/golden does
// for the rest of the tree (refused under CI=true).
package testscripts

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rke2-proxy-backend": func() { os.Exit(cli.Main(os.Args, os.Stdout, os.Stderr)) },
		// The generator's own program, as the packages install it.
		"rke2-proxy-backend-generator": func() { os.Exit(generator.Main(os.Args[1:], os.Stderr)) },
		"fake-kube-proxy":              fakeKubeProxy,
	})
}

func TestScripts(t *testing.T) {
	p := params("testdata")
	p.UpdateScripts = golden.Update(t)
	if d, ok := t.Deadline(); ok {
		p.Deadline = d
	}
	runScripts(goT{t}, p)
}

// runScripts runs the scripts of p as TestScripts does: under CI=true a
// script that skips fails (strictT).
func runScripts(t testscript.T, p testscript.Params) {
	testscript.RunT(strictT{t}, p)
}

// params are the settings every script runs with, so the tests of the
// conditions run a script exactly as TestScripts would.
func params(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"hide-tools": hideTools},
		Setup: func(env *testscript.Env) error {
			if err := toolsOnPath(dir, env); err != nil {
				return err
			}
			// Scripts never see the developer's host root by accident. The
			// root exists (empty when the archive has no root/ files): a
			// --root that does not is refused.
			env.Setenv("RKE2_PROXY_BACKEND_ROOT", env.WorkDir+"/root")
			// The operator config example the packages ship, for scripts
			// that hold it to what they say of every config.
			shipped, err := filepath.Abs("../packaging/config.yaml")
			if err != nil {
				return err
			}
			env.Setenv("SHIPPED_CONFIG", shipped)
			return os.MkdirAll(env.WorkDir+"/root", 0o755)
		},
		Condition: condition,
	}
}

// condition answers this project's script conditions. testscript asks it
// only for names it does not know itself (exec:, short, GOOS, ...); any
// other name is an error, so a typo such as [!netn] fails the script
// instead of skipping it forever. Under CI=true a condition this host
// does not meet is an error too, naming it: CI runs as root with every
// tool installed, so a [!root] skip there is a broken CI, not a pass.
func condition(cond string) (bool, error) {
	met, why, err := prerequisite(cond)
	if err != nil {
		return false, err
	}
	if !met && ci() {
		return false, unmet("["+cond+"]", why)
	}
	return met, nil
}

// prerequisite says whether this host meets the project's condition cond
// and, when it does not, why.
func prerequisite(cond string) (met bool, why string, err error) {
	switch cond {
	case "root":
		return os.Geteuid() == 0, fmt.Sprintf("not running as root (uid %d)", os.Geteuid()), nil
	case "netns":
		// unshare -n works only as root (or with user namespaces).
		if os.Geteuid() != 0 {
			return false, fmt.Sprintf("a network namespace needs root, and this runs as uid %d", os.Geteuid()), nil
		}
		if out, err := exec.Command("unshare", "-n", "true").CombinedOutput(); err != nil {
			return false, fmt.Sprintf("unshare -n true: %v %s", err, bytes.TrimSpace(out)), nil
		}
		return true, "", nil
	case "bash-completion":
		// Debian's bash-completion, which cobra's bash script builds on.
		const file = "/usr/share/bash-completion/bash_completion"
		_, err := os.Stat(file)
		return err == nil, fmt.Sprintf("%v (Debian package bash-completion)", err), nil
	}
	return false, "", fmt.Errorf("unknown condition %q (this project knows root, netns, bash-completion; testscript knows exec:NAME, short, GOOS names, ...)", cond)
}

// execCondition finds the [exec:NAME] and [!exec:NAME] conditions that
// open a script line.
var execCondition = regexp.MustCompile(`^\s*(?:\[!?[^\]\s]+\]\s*)*\[!?exec:([^\]\s]+)\]`)

// toolsOnPath fails a script, under CI=true, whose exec:NAME conditions
// name a program its PATH lacks. testscript answers exec: itself, with
// false rather than an error, so Setup reads the script's conditions
// before it runs. testscript names a script's work directory
// script-NAME after its file NAME.txtar.
func toolsOnPath(dir string, env *testscript.Env) error {
	if !ci() {
		return nil
	}
	file := filepath.Join(dir, strings.TrimPrefix(filepath.Base(env.WorkDir), "script-")+".txtar")
	a, err := txtar.ParseFile(file)
	if err != nil {
		return fmt.Errorf("reading the script's exec: conditions: %w", err)
	}
	for i, line := range strings.Split(string(a.Comment), "\n") {
		for rest := line; ; {
			m := execCondition.FindStringSubmatchIndex(rest)
			if m == nil {
				break
			}
			tool := rest[m[2]:m[3]]
			if _, err := exec.LookPath(tool); err != nil {
				return unmet(fmt.Sprintf("%s:%d: [exec:%s]", file, i+1, tool), fmt.Sprintf("%s is not on PATH", tool))
			}
			rest = rest[m[1]:]
		}
	}
	return nil
}

func ci() bool { return os.Getenv("CI") == "true" }

// unmet is the error of a condition CI does not meet, in
// testhost.Unmet's words.
func unmet(cond, why string) error {
	return fmt.Errorf("condition %s is not met: %s; CI=true, and CI must meet every prerequisite rather than skip", cond, why)
}

// strictT is testscript's view of a test: under CI=true a script that
// skips fails instead, whatever made it skip (a bare skip, or a condition
// testscript answers itself such as [short] or [!net]).
type strictT struct{ testscript.T }

func (t strictT) Skip(args ...any) {
	if ci() {
		t.Fatal(append([]any{"the script skipped under CI=true, and CI must meet every prerequisite rather than skip:"}, args...)...)
	}
	t.T.Skip(args...)
}

func (t strictT) Run(name string, f func(testscript.T)) {
	t.T.Run(name, func(sub testscript.T) { f(strictT{sub}) })
}

// goT is a *testing.T as a testscript.T (what testscript.Run does inside).
type goT struct{ *testing.T }

func (t goT) Run(name string, f func(testscript.T)) {
	t.T.Run(name, func(sub *testing.T) { f(goT{sub}) })
}

func (goT) Verbose() bool { return testing.Verbose() }

// hideTools NAME... makes PATH a directory of links to every program the
// script's PATH finds, except NAMEs: a host without those tools, with
// everything else (sh, unshare, the CLI itself) where it was. A program
// run by its absolute path is still there, as on a host where it lives
// outside PATH.
func hideTools(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: hide-tools NAME...")
	}
	hidden := map[string]bool{}
	for _, a := range args {
		hidden[a] = true
	}
	dir := ts.MkAbs(".hidden-tools-path")
	ts.Check(os.RemoveAll(dir))
	ts.Check(os.Mkdir(dir, 0o755))
	for _, d := range filepath.SplitList(ts.Getenv("PATH")) {
		entries, _ := os.ReadDir(d) // a PATH entry that does not exist finds nothing
		for _, e := range entries {
			link := filepath.Join(dir, e.Name())
			if hidden[e.Name()] || strings.HasPrefix(d, dir) {
				continue
			}
			if _, err := os.Lstat(link); err == nil {
				continue // an earlier PATH entry wins, as in a lookup
			}
			ts.Check(os.Symlink(filepath.Join(d, e.Name()), link))
		}
	}
	ts.Setenv("PATH", dir)
}

// fakeKubeProxy plays kube-proxy's metrics server for the scripts:
// `fake-kube-proxy ADDR MODE [METRICS-FILE]` serves GET /proxyMode as MODE
// and /metrics from METRICS-FILE on ADDR, says "listening" on stdout once
// it accepts, and runs until killed.
func fakeKubeProxy() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: fake-kube-proxy ADDR MODE [METRICS-FILE]")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake-kube-proxy:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/proxyMode", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, os.Args[2]) })
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		if len(os.Args) < 4 {
			http.NotFound(w, r)
			return
		}
		http.ServeFile(w, r, os.Args[3])
	})
	fmt.Println("listening on", ln.Addr())
	os.Exit(func() int { fmt.Fprintln(os.Stderr, http.Serve(ln, mux)); return 1 }())
}
