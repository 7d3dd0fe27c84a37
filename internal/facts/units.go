package facts

import (
	"bufio"
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// unitFile is what the probe needs from a unit's [Service] section.
type unitFile struct {
	execStart []string // every ExecStart= value; "" resets the list
	envFiles  []string
	env       []string // Environment= values, unsplit
	// envLine and envFileLine are the lines env and envFiles start on;
	// envReset and envFileReset say an empty assignment dropped what came
	// before (in this file and, for a drop-in, in the files before it).
	envLine, envFileLine   []int
	envReset, envFileReset bool
}

// parseUnit reads the [Service] keys we need; systemd's line continuations
// (trailing backslash) and comments are honoured, everything else ignored.
func parseUnit(text string) unitFile {
	var u unitFile
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), maxConfigLine)
	var pending string
	n, start := 0, 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if strings.TrimSpace(pending) == "" {
			start = n // the first line with something on it
		}
		if cont, ok := strings.CutSuffix(line, "\\"); ok {
			pending += cont + " "
			continue
		}
		line, pending = pending+line, ""
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			section = strings.Trim(line, "[]")
			continue
		}
		key, value, found := strings.Cut(line, "=")
		if !found || section != "Service" {
			continue
		}
		value = strings.TrimSpace(value)
		switch strings.TrimSpace(key) {
		case "ExecStart":
			if value == "" {
				u.execStart = nil
			} else {
				u.execStart = append(u.execStart, value)
			}
		case "EnvironmentFile":
			if value == "" {
				u.envFiles, u.envFileLine, u.envFileReset = nil, nil, true
			} else {
				u.envFiles, u.envFileLine = append(u.envFiles, value), append(u.envFileLine, start)
			}
		case "Environment":
			if value == "" {
				u.env, u.envLine, u.envReset = nil, nil, true
			} else {
				u.env, u.envLine = append(u.env, value), append(u.envLine, start)
			}
		}
	}
	return u
}

// execBinary is the program of an ExecStart= value, without systemd's
// prefixes (-, @, +, !, !!, :).
func execBinary(value string) string {
	words := ParseCmdline(value)
	if len(words) == 0 {
		return ""
	}
	return strings.TrimLeft(words[0], "-@+!:")
}

// parseEnvFile reads KEY=VALUE lines the way systemd's EnvironmentFile=
// does for the cases RKE2 installs meet: # and ; comments, optional
// surrounding quotes, later keys replacing earlier ones.
func parseEnvFile(text string, env map[string]string) {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, value, found := strings.Cut(line, "=")
		if !found {
			continue
		}
		env[strings.TrimSpace(key)] = unquote(strings.TrimSpace(value))
	}
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// unitEnv is the environment a unit's process gets: Environment= first,
// then the environment files in order (systemd: files override Environment=).
func (p *probe) unitEnv(name string, u unitFile) map[string]string {
	env := map[string]string{}
	for _, line := range u.env {
		for _, word := range ParseCmdline(line) {
			if k, v, ok := strings.Cut(word, "="); ok {
				env[k] = v
			}
		}
	}
	files := u.envFiles
	if len(files) == 0 {
		files = hostfs.RKE2EnvFiles
	}
	for _, f := range files {
		f, ok := envFilePath(name, f)
		if !ok {
			continue
		}
		data, ok := p.read(f, "settings in it (such as RKE2_CONFIG_FILE) are unknown")
		if ok {
			parseEnvFile(string(data), env)
		}
	}
	return env
}

// envFilePath is an EnvironmentFile= value's path for unit name, with
// the specifiers RKE2's and k3s's units use expanded; ok is false for a
// relative path, which systemd refuses. A leading "-" only makes a missing
// file fine, which it is here anyway.
func envFilePath(name, value string) (string, bool) {
	short := strings.TrimSuffix(name, ".service")
	f := strings.NewReplacer("%N", short, "%n", name, "%p", short).Replace(strings.TrimPrefix(value, "-"))
	return f, path.IsAbs(f)
}

// rke2Units finds rke2-server.service and rke2-agent.service; for each name
// the first directory in hostfs.UnitSearchDirs wins, as in systemd. Units
// distro.Find already found (Options.Units) are read where it found them,
// not looked up again. A distribution without fixed unit names has its
// units found (k3sUnits).
func (p *probe) rke2Units() []RKE2Unit {
	if p.opts.Distribution.Profile().Units == nil {
		return p.k3sUnits()
	}
	units := []RKE2Unit{}
	for _, role := range []string{"server", "agent"} {
		name := "rke2-" + role + ".service"
		for _, unitPath := range p.unitPaths(name) {
			data, ok := p.read(unitPath, "this RKE2 unit's binary and config file are unknown")
			if !ok {
				if !p.absent(unitPath) {
					break // present but unreadable: already reported, and it still shadows later dirs
				}
				continue
			}
			u := parseUnit(string(data))
			unit := RKE2Unit{Name: name, Path: unitPath, Role: role}
			if len(u.execStart) > 0 {
				unit.Binary = execBinary(u.execStart[len(u.execStart)-1])
			}
			unit.ConfigFile = p.unitEnv(name, u)["RKE2_CONFIG_FILE"]
			units = append(units, unit)
			break
		}
	}
	if len(units) == 0 {
		p.problem("No rke2-server.service or rke2-agent.service in %s: RKE2 is not installed (yet), so there is nothing to configure.", strings.Join(hostfs.UnitSearchDirs, ", "))
	}
	return units
}

// unitPaths are where to look for RKE2's unit name: where distro.Find found
// it when the caller passed its units, else every unit directory in order.
func (p *probe) unitPaths(name string) []string {
	if p.opts.Units == nil {
		paths := make([]string, len(hostfs.UnitSearchDirs))
		for i, dir := range hostfs.UnitSearchDirs {
			paths[i] = path.Join(dir, name)
		}
		return paths
	}
	for _, u := range p.opts.Units {
		if u.Name == name {
			return []string{u.Path}
		}
	}
	return nil
}
