package distro

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

const (
	// maxUnitDirEntries bounds the unit directories listed for k3s-*
	// units, as the generator bounds its *.wants walk.
	maxUnitDirEntries = 4096
	// maxUnitFile is far more than any k3s unit (about 1 kB).
	maxUnitFile = 64 << 10
)

// k3sBinaries and rke2Binaries are where the installers put the binaries:
// only evidence when no unit is installed (a unit names its own binary).
var (
	k3sBinaries  = []string{"/usr/local/bin/k3s", "/usr/bin/k3s"}
	rke2Binaries = []string{"/usr/local/bin/rke2", "/opt/rke2/bin/rke2", "/usr/bin/rke2"}
)

// Find says which distribution root runs. override (from --distribution)
// wins; else the installed units decide, RKE2's first (a node runs one,
// and an RKE2 node with a stray k3s unit keeps its behaviour); without
// units, a k3s binary or data dir and no RKE2 one means k3s; else RKE2.
// It reads only unit file names, k3s-* units' ExecStart= and a few stats:
// the generator calls it before anything else.
func Find(root hostfs.Root, override Kind) Distro {
	rke2, k3sFound := rke2Units(root), k3sUnits(root)
	switch {
	case override == RKE2:
		return Distro{Kind: RKE2, Units: rke2, Source: "--distribution rke2"}
	case override == k3s:
		return Distro{Kind: k3s, Units: k3sFound, Source: "--distribution k3s"}
	case len(rke2) > 0:
		d := Distro{Kind: RKE2, Units: rke2, Source: "RKE2's units are installed (" + strings.Join(Distro{Units: rke2}.UnitNames(), ", ") + ")"}
		if len(k3sFound) > 0 {
			d.Note = "k3s's units (" + strings.Join(Distro{Units: k3sFound}.UnitNames(), ", ") + ") are installed too; RKE2 is managed: pass --distribution k3s for k3s"
		}
		return d
	case len(k3sFound) > 0:
		return Distro{Kind: k3s, Units: k3sFound, Source: "k3s's units are installed (" + strings.Join(Distro{Units: k3sFound}.UnitNames(), ", ") + ")"}
	case anyExists(root, append(k3sBinaries, hostfs.K3sDataDir)) && !anyExists(root, append(rke2Binaries, hostfs.RKE2DataDir)):
		return Distro{Kind: k3s, Source: "no unit is installed, but k3s's binary or data directory is"}
	}
	return Distro{Kind: RKE2, Source: "no k3s unit, binary or data directory: RKE2, the default"}
}

// rke2Units finds rke2-server.service and rke2-agent.service where systemd
// would, the first directory winning, as facts reads them: a path is
// skipped when it or a directory on it is missing, and a unit that is there
// but unreadable still shadows the later directories (the probe reports it;
// facts.Options.Units hands these to the probe, which reads them once).
func rke2Units(root hostfs.Root) []Unit {
	var out []Unit
	for _, name := range slices.Sorted(slices.Values(RKE2.Profile().Units)) {
		for _, dir := range hostfs.UnitSearchDirs {
			p := path.Join(dir, name)
			if _, err := root.Stat(p); err != nil && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				continue
			}
			out = append(out, Unit{Name: name, Path: p})
			break
		}
	}
	return out
}

// k3sUnits finds k3s.service and k3s-<name>.service (install.sh's server,
// agent, or INSTALL_K3S_NAME): a k3s-* name is k3s's only when its
// ExecStart= runs a binary named k3s, since other software may use the
// prefix. Sorted by name; the first directory wins per name.
func k3sUnits(root hostfs.Root) []Unit {
	seen := map[string]bool{}
	var out []Unit
	for i, dir := range hostfs.K3sUnitDirs {
		// Only install.sh's directory is listed (INSTALL_K3S_NAME names
		// any unit there); packages install the two fixed names, and
		// listing /usr/lib's hundreds of units would cost every boot.
		names := []string{"k3s.service", "k3s-agent.service"}
		if i == 0 {
			names = nil
			entries, _ := root.ReadDirMax(dir, maxUnitDirEntries)
			for _, e := range entries {
				names = append(names, e.Name())
			}
		}
		for _, name := range names {
			if seen[name] || !strings.HasSuffix(name, ".service") || (name != "k3s.service" && !strings.HasPrefix(name, "k3s-")) {
				continue
			}
			p := path.Join(dir, name)
			data, err := root.ReadFileMax(p, maxUnitFile)
			if err != nil {
				continue
			}
			bin := K3sProgram(data)
			if bin == "" {
				continue
			}
			seen[name] = true
			out = append(out, Unit{Name: name, Path: p, Binary: bin})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// K3sProgram is the program of a unit file's last ExecStart= in [Service]
// when it is named k3s (install.sh writes "ExecStart=/usr/local/bin/k3s \"
// with the role on the next line), else "". systemd's prefixes (-@+!:)
// are skipped.
func K3sProgram(unit []byte) string {
	section, program := "", ""
	sc := bufio.NewScanner(bytes.NewReader(unit))
	sc.Buffer(make([]byte, 0, 4096), maxUnitFile)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section != "[Service]" || strings.TrimSpace(key) != "ExecStart" {
			continue
		}
		fields := strings.Fields(value)
		program = ""
		if len(fields) > 0 {
			program = strings.TrimLeft(fields[0], "-@+!:")
		}
	}
	if program == "" || path.Base(program) != "k3s" {
		return ""
	}
	return program
}

func anyExists(root hostfs.Root, paths []string) bool {
	for _, p := range paths {
		if root.Exists(p) {
			return true
		}
	}
	return false
}
