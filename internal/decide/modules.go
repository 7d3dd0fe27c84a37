package decide

import (
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// preloads is what apply loads for b on this kernel: b's modules, less
// those the kernel does not build as modules of their own. A module that
// is not loaded, not built in and not in the (read) module tree, whose
// option the config sets to y or does not set, is no file modprobe could
// find: its code is in the kernel or in another module (nft_counter is
// part of nf_tables.ko on 6.1, which has no CONFIG_NFT_COUNTER), or this
// kernel lacks it, which only matters when b requires it, and then the
// requirement says so. Asking modprobe for it would list a healthy node's
// modules as missing. A module whose option says m stays: its file is
// really missing, and apply must say so.
func preloads(b backend.Backend, f facts.Facts) []string {
	m := f.Modules
	out := []string{}
	for _, mod := range b.Modules() {
		if !m.AvailableKnown || f.Kernel.ConfigSource == "" ||
			facts.HasModule(m.Loaded, mod) || facts.HasModule(m.Builtin, mod) || facts.HasModule(m.Available, mod) {
			out = append(out, mod)
			continue
		}
		opts := backend.ModuleOptions(mod)
		if len(opts) == 0 || slices.ContainsFunc(opts, func(o string) bool { return f.Kernel.Config[o] == facts.Module }) {
			out = append(out, mod)
		}
	}
	return out
}
