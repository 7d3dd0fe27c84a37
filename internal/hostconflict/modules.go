package hostconflict

import (
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// modulesMissing lists b's modules whose option is =m while no module file
// is installed (and none is loaded or built in). Only judged when the
// installed-module list was read: otherwise absence proves nothing.
func modulesMissing(f facts.Facts, b backend.Backend) []string {
	m := f.Modules
	if b == "" || !m.AvailableKnown {
		return nil
	}
	var out []string
	for _, mod := range b.Modules() {
		if !setAsModule(f.Kernel, backend.ModuleOptions(mod)) {
			continue
		}
		if facts.HasModule(m.Loaded, mod) || facts.HasModule(m.Builtin, mod) || facts.HasModule(m.Available, mod) {
			continue
		}
		out = append(out, mod)
	}
	return out
}

// setAsModule reports whether the config sets one of opts to m.
func setAsModule(k facts.Kernel, opts []string) bool {
	return slices.ContainsFunc(opts, func(o string) bool { return k.Config[o] == facts.Module })
}

// modulesPackageFix names the package that carries the extra modules on
// the distributions that split them out.
func modulesPackageFix(release string) string {
	switch pkg, distro := backend.ModulesPackageOf(release); distro {
	case "EL":
		return "dnf install " + pkg + " (EL ships nft_compat, xt_* and ip_set only there)"
	case "Ubuntu":
		return "apt-get install " + pkg
	}
	return "install the kernel package that carries the extra netfilter modules for " + release
}
