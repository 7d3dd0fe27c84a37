// Package testscripts runs the CLI end to end: each testdata/*.txtar is a
// script named after the subcommand it exercises, with its fixture host root
// and golden output inside the archive. UPDATE_GOLDEN=1 rewrites goldens.
package testscripts

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"rke2-proxy-backend": func() { os.Exit(cli.Main(os.Args, os.Stdout, os.Stderr)) },
		"rke2-proxy-backend-generator": func() {
			os.Exit(cli.Main(os.Args, os.Stdout, os.Stderr))
		},
		"fake-kube-proxy": fakeKubeProxy,
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, params("testdata"))
}

// params are the settings every script runs with, so the typo test below
// runs a script exactly as TestScripts would.
func params(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") == "1",
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"hide-tools": hideTools},
		Setup: func(env *testscript.Env) error {
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
// instead of skipping it forever.
func condition(cond string) (bool, error) {
	switch cond {
	case "root":
		return os.Geteuid() == 0, nil
	case "netns":
		// unshare -n works only as root (or with user namespaces).
		if os.Geteuid() != 0 {
			return false, nil
		}
		return exec.Command("unshare", "-n", "true").Run() == nil, nil
	case "bash-completion":
		// Debian's bash-completion, which cobra's bash script builds on.
		_, err := os.Stat("/usr/share/bash-completion/bash_completion")
		return err == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q (this project knows root, netns, bash-completion; testscript knows exec:NAME, short, GOOS names, ...)", cond)
}

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
