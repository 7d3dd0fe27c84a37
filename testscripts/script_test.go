// Package testscripts runs the CLI end to end: each testdata/*.txtar is a
// script named after the subcommand it exercises, with its fixture host root
// and golden output inside the archive. UPDATE_GOLDEN=1 rewrites goldens.
package testscripts

import (
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
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_GOLDEN") == "1",
		Setup: func(env *testscript.Env) error {
			// Scripts never see the developer's host root by accident. The
			// root exists (empty when the archive has no root/ files): a
			// --root that does not is refused.
			env.Setenv("RKE2_PROXY_BACKEND_ROOT", env.WorkDir+"/root")
			return os.MkdirAll(env.WorkDir+"/root", 0o755)
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
