package apply

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Settle turns the decision every deciding subcommand makes (in) into the
// one apply starts from, and names RKE2's main config file, next to which
// the drop-in goes:
//   - configEnv is RKE2_CONFIG_FILE from apply's environment: RKE2 will read
//     that file, not the one the probe found, so the decision is made on it;
//   - forced is the generator's plan (apply --backend, "" for none): with
//     one, this boot's earlier plan is not weighed again. Carrying it out,
//     or falling forward from it, is the chooser's (redecide.go).
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
			return in, "", fmt.Errorf("%s=%s: %w", f.RKE2.Distribution.Profile().ConfigEnv, configEnv, err)
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
	in.Facts, in.Decision = f, d
	return in, mainFile, nil
}
