package facts

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Module files in modules.dep / modules.builtin end in one of these.
var moduleSuffixes = []string{".ko", ".ko.xz", ".ko.zst", ".ko.gz"}

// ParseProcModules reads /proc/modules ("name size refs deps state addr"
// per line) and returns the loaded module names, sorted.
func ParseProcModules(r io.Reader) ([]string, error) {
	return parseModuleLines(r, func(line string) (string, bool) {
		name, _, _ := strings.Cut(line, " ")
		return name, true
	})
}

// ParseModulesBuiltin reads modules.builtin (one "kernel/.../name.ko" per
// line) and returns the built-in module names, sorted.
func ParseModulesBuiltin(r io.Reader) ([]string, error) {
	return parseModuleLines(r, moduleFromPath)
}

// ParseModulesDep reads modules.dep ("kernel/.../name.ko.xz: deps...") and
// returns the names of the modules that can be loaded, sorted.
func ParseModulesDep(r io.Reader) ([]string, error) {
	return parseModuleLines(r, func(line string) (string, bool) {
		file, _, found := strings.Cut(line, ":")
		if !found {
			return "", false
		}
		return moduleFromPath(strings.TrimSpace(file))
	})
}

// moduleFromPath turns "kernel/net/netfilter/nf_tables.ko.zst" into "nf_tables".
func moduleFromPath(p string) (string, bool) {
	base := path.Base(p)
	for _, s := range moduleSuffixes {
		if name, ok := strings.CutSuffix(base, s); ok {
			return name, true
		}
	}
	return "", false
}

// parseModuleLines applies name to each non-empty line, checks the result
// and returns the names normalised as the kernel compares them ('-' and
// '_' are the same in module names), sorted and unique.
func parseModuleLines(r io.Reader, name func(string) (string, bool)) ([]string, error) {
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxConfigLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		mod, ok := name(line)
		if !ok || !validModule(mod) {
			return nil, fmt.Errorf("line %d does not name a module", n)
		}
		seen[strings.ReplaceAll(mod, "-", "_")] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	names := make([]string, 0, len(seen))
	for m := range seen {
		names = append(names, m)
	}
	sort.Strings(names)
	return names, nil
}

func validModule(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (p *probe) modules(release string) Modules {
	m := Modules{Loaded: []string{}, Builtin: []string{}, Available: []string{}}
	if p.image {
		p.notInImage("Loaded modules (%s): an image runs no kernel, so its module tree and kernel config alone say what the kernel has.", hostfs.ProcModules)
	} else {
		m.Loaded, m.LoadedKnown = p.moduleList(hostfs.ProcModules, ParseProcModules, "loaded modules are unknown",
			hostfs.ProcModules+" is missing: loaded modules are unknown (normal on kernels built without module support).")
	}
	if release == "" {
		p.problem("Built-in and available modules are unknown: the kernel release is unknown, so " + hostfs.ModulesDir + "/<release> cannot be found.")
		return m
	}
	dir := hostfs.ModulesDir + "/" + release
	m.Builtin, m.BuiltinKnown = p.moduleList(dir+"/modules.builtin", ParseModulesBuiltin, "built-in modules are unknown",
		dir+"/modules.builtin is missing: built-in modules are unknown.")
	m.Available, m.AvailableKnown = p.moduleList(dir+"/modules.dep", ParseModulesDep, "loadable modules are unknown",
		dir+"/modules.dep is missing: which modules can be loaded is unknown (no modules installed for this kernel, or depmod never ran).")
	return m
}

// moduleList reads one module list; missing and broken files give an empty
// list with known=false.
func (p *probe) moduleList(hostPath string, parse func(io.Reader) ([]string, error), consequence, missing string) ([]string, bool) {
	max := int64(hostfs.MaxTextFile)
	if strings.HasPrefix(hostPath, hostfs.ModulesDir+"/") {
		max = hostfs.MaxModuleIndex
	}
	data, ok := p.readMax(hostPath, max, consequence)
	if !ok {
		if p.absent(hostPath) {
			p.problem("%s", missing)
		}
		return []string{}, false
	}
	names, err := parse(strings.NewReader(string(data)))
	if err != nil {
		p.unreadable("%s: %s: %s; fix or remove the file (depmod rebuilds modules.dep)", hostPath, err, consequence)
		return []string{}, false
	}
	return names, true
}

// HasModule reports whether list names the module, spelled either way:
// modprobe treats "-" and "_" alike, and hand-written lists (tests, a
// config) may use either.
func HasModule(list []string, name string) bool {
	name = strings.ReplaceAll(name, "-", "_")
	for _, m := range list {
		if strings.ReplaceAll(m, "-", "_") == name {
			return true
		}
	}
	return false
}
