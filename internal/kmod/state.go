// Package kmod preloads the kernel modules of one backend, and only those:
// loading iptable_* on an nft node creates legacy tables that mislead the
// kube-proxy image's backend detection (DOMAIN.md section 4).
package kmod

import (
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kmod/presence"
)

// State is what the kernel has: modules loaded now and modules built in
// (presence.Set), and what modprobe could load.
type State struct {
	// Supported is false when /proc/modules is absent: the kernel was built
	// without loadable modules, so every feature is built in or missing.
	Supported bool
	Loaded    map[string]bool
	Builtin   map[string]bool
	// Available holds the modules (and exact aliases) modprobe can load,
	// from modules.dep and modules.alias; AvailableKnown is false when
	// neither could be read, and then every module is worth a try.
	Available      map[string]bool
	AvailableKnown bool
}

// Present reports whether name is loaded or built in.
func (s State) Present(name string) bool {
	n := Normalize(name)
	return s.Loaded[n] || s.Builtin[n]
}

// Normalize spells a module name the way the kernel lists it: modprobe
// treats "-" and "_" alike, /proc/modules always shows "_".
func Normalize(name string) string { return presence.Normalize(name) }

// ReadState reads /proc/modules and /lib/modules/<release>/modules.builtin,
// modules.dep and modules.alias under root. A missing file means nothing is
// known from it; an unreadable one is an error.
func ReadState(root hostfs.Root, release string) (State, error) {
	set, err := presence.Read(root, release)
	s := State{Supported: set.Supported, Loaded: set.Loaded, Builtin: set.Builtin, Available: map[string]bool{}}
	if err != nil || !s.Supported || release == "" || strings.Contains(release, "/") {
		return s, err
	}
	dir := path.Join(hostfs.ModulesDir, release)
	for _, f := range []struct {
		file  string
		parse func(string)
	}{
		// "kernel/net/netfilter/nft_ct.ko.xz: kernel/.../nf_tables.ko.xz"
		{"modules.dep", func(line string) {
			file, _, _ := strings.Cut(line, ":")
			if name, ok := presence.ModuleName(file); ok {
				s.Available[name] = true
			}
		}},
		// "alias ipt_MASQUERADE xt_MASQUERADE"; device aliases have globs
		{"modules.alias", func(line string) {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "alias" && !strings.ContainsAny(f[1], "*?[") {
				s.Available[Normalize(f[1])] = true
			}
		}},
	} {
		p := path.Join(dir, f.file)
		if _, err := root.Stat(p); err != nil {
			continue
		}
		if err := presence.ReadLines(root, p, f.parse); err != nil {
			return s, err
		}
		s.AvailableKnown = true
	}
	return s, nil
}
