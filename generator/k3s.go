package generator

import (
	"fmt"
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// k3sEnvironment adds Environment=IPTABLES_MODE= to the drop-ins of k3s's
// units. k3s runs kube-proxy (and flannel, and kube-router's policy
// controller) inside its own process, so the unit's environment is theirs:
// k3s-root's iptables-detect.sh honours IPTABLES_MODE before it guesses.
// Never <unit>.env: k3s's install.sh rewrites that file on every upgrade.
// The line goes at the end of the drop-in, which ends in [Service].
// The verify unit, shipped After= RKE2's units only, is ordered after
// the k3s units too, so it starts once k3s reports ready.
func k3sEnvironment(files []units.File, k3sUnits []string, iptablesMode string) ([]units.File, error) {
	// The verify unit is ordered after k3s's units whatever the mode;
	// only the environment line needs one.
	env := ""
	if iptablesMode != "" {
		var err error
		if env, err = units.EnvironmentValue("IPTABLES_MODE", iptablesMode); err != nil {
			return nil, fmt.Errorf("k3s drop-in: %w", err)
		}
	}
	verify := path.Join(units.VerifyUnit+".d", hostfs.UnitDropInName)
	ours := map[string]bool{}
	for _, u := range k3sUnits {
		ours[path.Join(u+".d", hostfs.UnitDropInName)] = true
	}
	out := make([]units.File, len(files))
	for i, f := range files {
		out[i] = f
		switch {
		case ours[f.Path] && env != "":
			out[i].Data = append(append([]byte{}, f.Data...), "Environment="+env+"\n"...)
		case f.Path == verify:
			out[i].Data = append(append([]byte{}, f.Data...), "\n[Unit]\nAfter="+strings.Join(k3sUnits, " ")+"\n"...)
		}
	}
	return out, nil
}

// unitNames are the units the drop-ins go to: found ones (k3s's) as
// distro found them, fixed ones (RKE2's) as the probe read them (its facts
// name them, as before distro).
func unitNames(dist distro.Distro, rke2Units []string) []string {
	if dist.Kind.Profile().Units == nil {
		return dist.UnitNames()
	}
	return rke2Units
}
