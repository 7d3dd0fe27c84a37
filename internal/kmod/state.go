// Package kmod preloads the kernel modules of one backend, and only those:
// loading iptable_* on an nft node creates legacy tables that mislead the
// kube-proxy image's backend detection (DOMAIN.md section 4).
package kmod

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Host paths the module state is read from.
const (
	ProcModules = "/proc/modules"
	ModulesDir  = "/lib/modules"
)

// State is what the kernel has: modules loaded now and modules built in.
type State struct {
	// Supported is false when /proc/modules is absent: the kernel was built
	// without loadable modules, so every feature is built in or missing.
	Supported bool
	Loaded    map[string]bool
	Builtin   map[string]bool
}

// Present reports whether name is loaded or built in.
func (s State) Present(name string) bool {
	n := Normalize(name)
	return s.Loaded[n] || s.Builtin[n]
}

// Normalize spells a module name the way the kernel lists it: modprobe
// treats "-" and "_" alike, /proc/modules always shows "_".
func Normalize(name string) string { return strings.ReplaceAll(name, "-", "_") }

// ReadState reads /proc/modules and /lib/modules/<release>/modules.builtin
// under root. A missing modules.builtin means nothing is known to be built
// in; an unreadable one is an error.
func ReadState(root hostfs.Root, release string) (State, error) {
	s := State{Loaded: map[string]bool{}, Builtin: map[string]bool{}}
	data, err := root.ReadFile(ProcModules)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return s, fmt.Errorf("read %s: %w", root.Path(ProcModules), err)
	}
	s.Supported = true
	for _, line := range strings.Split(string(data), "\n") {
		if name, _, _ := strings.Cut(line, " "); name != "" {
			s.Loaded[Normalize(name)] = true
		}
	}
	if release == "" || strings.Contains(release, "/") {
		return s, nil
	}
	builtinFile := path.Join(ModulesDir, release, "modules.builtin")
	data, err = root.ReadFile(builtinFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return s, fmt.Errorf("read %s: %w", root.Path(builtinFile), err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// kernel/net/netfilter/nf_tables.ko -> nf_tables
		base := path.Base(strings.TrimSpace(sc.Text()))
		if name, ok := strings.CutSuffix(base, ".ko"); ok {
			s.Builtin[Normalize(name)] = true
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("read %s: %w", root.Path(builtinFile), err)
	}
	return s, nil
}
