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
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") == "1",
		Setup: func(env *testscript.Env) error {
			// Scripts never see the developer's host root by accident.
			env.Setenv("RKE2_PROXY_BACKEND_ROOT", env.WorkDir+"/root")
			return nil
		},
		Condition: func(cond string) (bool, error) {
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
			return false, nil
		},
	})
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
