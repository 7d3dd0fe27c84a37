package facts

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// UnitEnvSetting is the operator's own assignment of one variable in a k3s
// unit's environment, as systemd merges it, with where it is.
type UnitEnvSetting struct {
	Value string `json:"value"`
	File  string `json:"file"`
	Line  int    `json:"line"`
	// EnvFile: it comes from an EnvironmentFile=, whose variables systemd
	// puts over every Environment= (the generator's drop-in's too).
	EnvFile bool `json:"env_file,omitempty"`
	// AfterOurs: a drop-in whose name sorts after the generator's sets it,
	// so systemd applies it after ours, whatever ours says.
	AfterOurs bool `json:"after_ours,omitempty"`
	// Rewritten: the file is install.sh's <unit>.env, which every k3s
	// install or upgrade rewrites keeping only K3S_*, CONTAINERD_* and
	// proxy variables: the setting does not survive it.
	Rewritten bool `json:"rewritten,omitempty"`
}

// Where names the file and line for reasons and errors.
func (s UnitEnvSetting) Where() string {
	if s.Line == 0 {
		return s.File
	}
	return fmt.Sprintf("%s line %d", s.File, s.Line)
}

// K3sIptablesMode is the operator's IPTABLES_MODE in the first k3s unit
// that sets one (a node runs one k3s unit); nil on RKE2 or when none does.
func (r RKE2) K3sIptablesMode() *UnitEnvSetting {
	for _, u := range r.Units {
		if u.IptablesMode != nil {
			return u.IptablesMode
		}
	}
	return nil
}

// dropInDirs are the unit directories whose <unit>.d systemd reads, in
// its precedence order (a file name in an earlier one hides the same name
// in later ones); the generator directories are left out: what this tool
// wrote is not the operator's choice.
var dropInDirs = []string{
	"/etc/systemd/system",
	"/run/systemd/system",
	"/usr/local/lib/systemd/system",
	"/usr/lib/systemd/system",
	"/lib/systemd/system",
}

// maxDropIns bounds one <unit>.d listing: a real one holds a handful.
const maxDropIns = 256

// unitDropIns are the operator's drop-ins of a unit in the order systemd
// applies them: sorted by file name across every directory, the first
// directory winning for a name. Our own drop-in is not among them.
func (p *probe) unitDropIns(unit string) []string {
	byName := map[string]string{}
	for _, dir := range dropInDirs {
		d := path.Join(dir, unit+".d")
		entries, err := p.root.ReadDirMax(d, maxDropIns)
		if err != nil && !isNotExist(err) {
			// A partial listing (more than maxDropIns) is still used.
			p.unreadable("%s: %s; the operator's settings in it may be missed: %s", d, errText(err), fixHint(d, err))
		}
		for _, e := range entries {
			name := e.Name()
			if !strings.HasSuffix(name, ".conf") || e.IsDir() || byName[name] != "" {
				continue
			}
			byName[name] = path.Join(d, name)
		}
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, byName[n])
	}
	return out
}

// k3sEnvSetting is the operator's effective assignment of name in a k3s
// unit (unitPath, already read as unitText): the unit file, then its
// drop-ins in order, the last assignment winning; then the environment
// files, which systemd applies over all of those. nil when nobody sets it.
func (p *probe) k3sEnvSetting(unit, unitPath, unitText, name string) *UnitEnvSetting {
	var found *UnitEnvSetting
	var envFiles []string
	files := append([]string{unitPath}, p.unitDropIns(unit)...)
	for i, file := range files {
		text := unitText
		if i > 0 {
			if target, err := p.root.Readlink(file); err == nil && target == "/dev/null" {
				continue // a masked drop-in: systemd reads nothing (and no same-named one below)
			}
			data, ok := p.read(file, "the operator's settings in it are unknown")
			if !ok {
				continue
			}
			text = string(data)
		}
		u := parseUnit(text)
		if u.envReset {
			found = nil
		}
		for j, line := range u.env {
			for _, word := range ParseCmdline(line) {
				if k, v, ok := strings.Cut(word, "="); ok && k == name {
					found = &UnitEnvSetting{Value: v, File: file, Line: u.envLine[j], AfterOurs: i > 0 && path.Base(file) > hostfs.UnitDropInName}
				}
			}
		}
		if u.envFileReset {
			envFiles = nil
		}
		envFiles = append(envFiles, u.envFiles...)
	}
	for _, f := range envFiles {
		file, ok := envFilePath(unit, f)
		if !ok {
			continue
		}
		data, ok := p.read(file, "the variables in it are unknown")
		if !ok {
			continue
		}
		if v, line, ok := envFileValue(string(data), name); ok {
			found = &UnitEnvSetting{Value: v, File: file, Line: line, EnvFile: true,
				Rewritten: file == path.Join(path.Dir(unitPath), unit+".env")}
		}
	}
	return found
}

// envFileValue is name's last value in an environment file (parseEnvFile's
// reading), with its line.
func envFileValue(text, name string) (value string, line int, ok bool) {
	for i, l := range strings.Split(text, "\n") {
		env := map[string]string{}
		parseEnvFile(l, env)
		if v, set := env[name]; set {
			value, line, ok = v, i+1, true
		}
	}
	return value, line, ok
}

// checkIptablesMode reports an operator's IPTABLES_MODE that k3s-root's
// iptables-detect.sh cannot run: it accepts only legacy and nft, and any
// other value makes every iptables call of kube-proxy, flannel and
// kube-router fail. An error, not a problem: k3s would run broken.
func (p *probe) checkIptablesMode(unit string, s *UnitEnvSetting) {
	if s == nil || s.Value == "legacy" || s.Value == "nft" {
		return
	}
	p.unreadable("%s: %s sets IPTABLES_MODE=%q for %s, which k3s's bundled iptables (k3s-root's iptables-detect.sh) does not accept: only legacy and nft work, anything else makes every iptables call of kube-proxy, flannel and kube-router fail; write IPTABLES_MODE=legacy or IPTABLES_MODE=nft there, or remove the line to let rke2-proxy-backend decide",
		s.Where(), keyword(s), s.Value, unit)
}

func keyword(s *UnitEnvSetting) string {
	if s.EnvFile {
		return "the environment file"
	}
	return "Environment="
}
