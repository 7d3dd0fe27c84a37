// Package presence says which kernel modules the running kernel has now:
// loaded (/proc/modules) or built in (modules.builtin of its release). It
// reads only those files, never the module tree and never modprobe, so a
// reader of netfilter state can ask it before it opens a kernel interface
// that would load a module (nfnetlink loads nf_tables for the first
// nf_tables request or group join); kmod builds its load plan on it.
package presence

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

// Set is what the kernel has: modules loaded now and modules built in.
type Set struct {
	// Supported is false when /proc/modules is absent: the kernel was built
	// without loadable modules, so every feature is built in or missing
	// and nothing can be loaded.
	Supported bool
	Loaded    map[string]bool
	Builtin   map[string]bool
	// BuiltinKnown says modules.builtin of the release was read.
	BuiltinKnown bool
}

// Present reports whether name is loaded or built in.
func (s Set) Present(name string) bool {
	n := Normalize(name)
	return s.Loaded[n] || s.Builtin[n]
}

// Normalize spells a module name the way the kernel lists it: modprobe
// treats "-" and "_" alike, /proc/modules always shows "_".
func Normalize(name string) string { return strings.ReplaceAll(name, "-", "_") }

// Read reads /proc/modules and /lib/modules/<release>/modules.builtin
// under root. A missing file means nothing is known from it; an
// unreadable one is an error.
func Read(root hostfs.Root, release string) (Set, error) {
	s := Set{Loaded: map[string]bool{}, Builtin: map[string]bool{}}
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
	p := path.Join(hostfs.ModulesDir, release, "modules.builtin")
	if _, err := root.Stat(p); err != nil {
		return s, nil
	}
	err = ReadLines(root, p, func(line string) {
		// kernel/net/netfilter/nf_tables.ko -> nf_tables
		if name, ok := ModuleName(line); ok {
			s.Builtin[name] = true
		}
	})
	s.BuiltinKnown = err == nil
	return s, err
}

// Absent says why module name is certainly not in root's running kernel
// now: modules are supported, /proc/modules does not list it, and the
// release's modules.builtin does not either. "" when it may be there:
// loaded, built in, or the files cannot tell (a kernel without module
// support loads nothing, so asking it is harmless; without
// modules.builtin a built-in module cannot be told from an absent one).
func Absent(root hostfs.Root, name string) string {
	n := Normalize(name)
	data, err := root.ReadFile(hostfs.ProcModules)
	if err != nil || bytes.Contains(append([]byte{'\n'}, data...), []byte("\n"+n+" ")) {
		return ""
	}
	rel, err := root.ReadFile(hostfs.KernelOSRelease)
	if err != nil {
		return ""
	}
	s, err := Read(root, strings.TrimSpace(string(rel)))
	if err != nil || !s.Supported || !s.BuiltinKnown || s.Present(n) {
		return ""
	}
	return fmt.Sprintf("%s is not loaded (%s) nor built in (%s)", n, hostfs.ProcModules,
		path.Join(hostfs.ModulesDir, strings.TrimSpace(string(rel)), "modules.builtin"))
}

// ModuleName turns a module file path into the kernel's module name.
func ModuleName(file string) (string, bool) {
	base := path.Base(strings.TrimSpace(file))
	for _, ext := range []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"} {
		if name, ok := strings.CutSuffix(base, ext); ok && name != "" {
			return Normalize(name), true
		}
	}
	return "", false
}

// ReadLines calls fn for each line of a module index under root; a
// missing file has none.
func ReadLines(root hostfs.Root, hostPath string, fn func(string)) error {
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
