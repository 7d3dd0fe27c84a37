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

// State is what the kernel has: modules loaded now and modules built in.
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
func Normalize(name string) string { return strings.ReplaceAll(name, "-", "_") }

// ReadState reads /proc/modules and /lib/modules/<release>/modules.builtin,
// modules.dep and modules.alias under root. A missing file means nothing is
// known from it; an unreadable one is an error.
func ReadState(root hostfs.Root, release string) (State, error) {
	s := State{Loaded: map[string]bool{}, Builtin: map[string]bool{}, Available: map[string]bool{}}
	data, err := root.ReadFile(hostfs.ProcModules)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return s, fmt.Errorf("read %s: %w", root.Path(hostfs.ProcModules), err)
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
	dir := path.Join(hostfs.ModulesDir, release)
	if err := readLines(root, path.Join(dir, "modules.builtin"), func(line string) {
		// kernel/net/netfilter/nf_tables.ko -> nf_tables
		if name, ok := moduleName(line); ok {
			s.Builtin[name] = true
		}
	}); err != nil {
		return s, err
	}
	for _, f := range []struct {
		file  string
		parse func(string)
	}{
		// "kernel/net/netfilter/nft_ct.ko.xz: kernel/.../nf_tables.ko.xz"
		{"modules.dep", func(line string) {
			file, _, _ := strings.Cut(line, ":")
			if name, ok := moduleName(file); ok {
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
		if err := readLines(root, p, f.parse); err != nil {
			return s, err
		}
		s.AvailableKnown = true
	}
	return s, nil
}

// moduleName turns a module file path into the kernel's module name.
func moduleName(file string) (string, bool) {
	base := path.Base(strings.TrimSpace(file))
	for _, ext := range []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"} {
		if name, ok := strings.CutSuffix(base, ext); ok && name != "" {
			return Normalize(name), true
		}
	}
	return "", false
}

// readLines calls fn for each line of a host file; a missing file has none.
func readLines(root hostfs.Root, hostPath string, fn func(string)) error {
	data, err := root.ReadFileMax(hostPath, hostfs.MaxModuleIndex)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", root.Path(hostPath), err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		fn(sc.Text())
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", root.Path(hostPath), err)
	}
	return nil
}
