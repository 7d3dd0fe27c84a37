package testhost

import (
	_ "embed"
	"strings"
)

// UnitK3s is k3s.service as k3s's install.sh writes it for a server
// (create_systemd_service_file): Type=notify, the role on the line after
// ExecStart='s binary, and EnvironmentFile= naming the unit's .env file.
//
//go:embed units/k3s.service
var UnitK3s string

// K3sUnit installs a k3s unit the way install.sh does: name is the unit's
// base ("k3s" for a server, "k3s-agent" for an agent, "k3s-<INSTALL_K3S_NAME>"
// otherwise), role is server or agent. The unit goes to /etc/systemd/system
// with its <unit>.env (install.sh keeps only K3S_* and proxy variables
// there), and the binary to /usr/local/bin/k3s.
func (h *Host) K3sUnit(name, role string) *Host {
	h.t.Helper()
	if role != "server" && role != "agent" {
		h.t.Fatalf("testhost: K3sUnit role %q: want server or agent", role)
	}
	unit := strings.Replace(UnitK3s, "/etc/systemd/system/k3s.service.env", "/etc/systemd/system/"+name+".service.env", 1)
	if role == "agent" {
		unit = strings.Replace(strings.Replace(unit, "Type=notify", "Type=exec", 1), "    server \\", "    agent \\", 1)
	}
	h.File("/etc/systemd/system/"+name+".service", unit)
	h.File("/etc/systemd/system/"+name+".service.env", "K3S_TOKEN=secret\n")
	return h.File("/usr/local/bin/k3s", "#!fake k3s\n")
}

// K3sBinary makes hostPath (e.g. /usr/local/bin/k3s) answer --version the
// way k3s does for version v ("v1.31.2+k3s1").
func (h *Host) K3sBinary(hostPath, v string) *Host {
	h.t.Helper()
	return h.Executable(hostPath, "#!/bin/sh\n[ \"$1\" = --version ] || exit 1\n"+
		"echo 'k3s version "+v+" (0123abcd)'\necho 'go version go1.23.6'\n")
}

// K3sConfig writes a k3s config file; a relative path is taken under
// /etc/rancher/k3s ("config.yaml", "config.yaml.d/50-local.yaml").
func (h *Host) K3sConfig(relPath, yaml string) *Host {
	h.t.Helper()
	if !strings.HasPrefix(relPath, "/") {
		relPath = "/etc/rancher/k3s/" + relPath
	}
	return h.File(relPath, yaml)
}

// K3sAux lays out k3s-root's bin/aux under the default data dir as k3s
// extracts it: xtables-set-mode.sh, iptables-detect.sh and the two multi
// binaries, with the iptables links pointing at target:
// "iptables-detect.sh" before the first run, "xtables-legacy-multi" or
// "xtables-nft-multi" once iptables-detect.sh has chosen (and stuck).
func (h *Host) K3sAux(target string) *Host {
	h.t.Helper()
	const aux = "/var/lib/rancher/k3s/data/0123abcd/bin/aux"
	for _, f := range []string{"xtables-set-mode.sh", "iptables-detect.sh", "xtables-legacy-multi", "xtables-nft-multi"} {
		h.Executable(aux+"/"+f, "#!fake "+f+"\n")
	}
	for _, l := range K3sAuxLinks {
		h.Symlink(aux+"/"+l, target)
	}
	return h.Symlink("/var/lib/rancher/k3s/data/current", "0123abcd")
}

// K3sAuxLinks are the links k3s-root ships in bin/aux to iptables-detect.sh.
var K3sAuxLinks = []string{"ip6tables", "ip6tables-restore", "ip6tables-save", "iptables", "iptables-restore", "iptables-save"}

// K3sUnitEnv is an operator's Environment= for k3s unit (its base name,
// "k3s"), as `systemctl edit` or a configuration tool writes it: a drop-in
// file in /etc/systemd/system/<unit>.service.d, or, with file "", a line
// appended to the unit file's [Service] (which ends install.sh's unit).
// k3s runs kube-proxy in its own process, so this is kube-proxy's env.
func (h *Host) K3sUnitEnv(unit, file, assignment string) *Host {
	h.t.Helper()
	if file == "" {
		p := "/etc/systemd/system/" + unit + ".service"
		data, err := h.Root().ReadFile(p)
		if err != nil {
			h.t.Fatalf("testhost: K3sUnitEnv: no unit %s: %v", p, err)
		}
		// The blank line ends install.sh's ExecStart= continuation.
		return h.File(p, string(data)+"\nEnvironment="+assignment+"\n")
	}
	return h.File("/etc/systemd/system/"+unit+".service.d/"+file, "[Service]\nEnvironment="+assignment+"\n")
}

// K3sPinnedLegacy is a k3s server whose operator pinned iptables-legacy in
// a drop-in of their own that sorts before the generator's: the NAS whose
// kernel lacks nf_tables, set up by hand before rke2-proxy-backend came.
func (h *Host) K3sPinnedLegacy() *Host {
	h.t.Helper()
	return h.K3sUnit("k3s", "server").K3sUnitEnv("k3s", "10-iptables.conf", "IPTABLES_MODE=legacy")
}
