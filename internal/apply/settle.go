package apply

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// EnvRKE2Config moves RKE2's main config file; the RKE2 unit's environment
// files may set it, and apply runs in that environment.
const EnvRKE2Config = "RKE2_CONFIG_FILE"

// Settle turns the decision every deciding subcommand makes (in) into the
// one apply carries out, and names RKE2's main config file, next to which
// the drop-in goes:
//   - configEnv is RKE2_CONFIG_FILE from apply's environment: RKE2 will read
//     that file, not the one the probe found, so the decision is made on it;
//   - forced is the generator's plan (apply --backend, "" for none): it is
//     carried out with decide.Force, and a host that cannot run it leaves a
//     problem in the returned Input.
//
// The error is a config (RKE2's or k3s's) that cannot be read: its intent is
// unknown.
func Settle(root hostfs.Root, in Input, forced backend.Backend, configEnv string) (Input, string, error) {
	f, d := in.Facts, in.Decision
	redecide := false
	if forced != "" && f.PreviousPlan != "" {
		// The generator already weighed this boot's plan when it chose
		// --backend; weighing our own earlier output again would only change
		// the reasons, and so the plan file, on every second run.
		f.PreviousPlan, redecide = "", true
	}
	mainFile := f.RKE2.ConfigFile
	if configEnv != "" && configEnv != mainFile {
		eff, err := rke2.LoadEffectiveOf(root, configEnv, f.RKE2.Distribution.Name())
		if err != nil {
			env := EnvRKE2Config
			if f.RKE2.Distribution == distro.K3s {
				env = EnvK3sConfig
			}
			return in, "", fmt.Errorf("%s=%s: %w", env, configEnv, err)
		}
		mainFile, f.RKE2.ConfigFile, f.RKE2.Config = configEnv, configEnv, eff
		redecide = true
	}
	if redecide {
		d = decide.Decide(f, in.Config)
	}
	if mainFile == "" {
		mainFile = hostfs.RKE2ConfigFile
	}
	problems := in.Problems
	if forced != "" && !d.Disabled && d.Backend != forced {
		var refused []string
		d, refused = decide.Force(f, in.Config, d, forced)
		problems = append(problems, refused...)
	}
	in.Facts, in.Decision, in.Problems = f, d, problems
	return in, mainFile, nil
}
