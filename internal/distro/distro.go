// Package distro says which Kubernetes distribution runs kube-proxy on a
// node, RKE2 or k3s, and what differs between them: each has one Profile
// (paths, units, how kube-proxy's environment reaches it, which writers
// share kube-proxy's backend, its name in sentences). Everything above the
// probe asks the profile instead of comparing kinds, so k3s is named only
// here.
package distro

import (
	"fmt"
	"path"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Kind is a distribution's name, as --distribution takes it.
type Kind string

// RKE2 is the default distribution; k3s is reached through Parse (or
// Kind("k3s")) and its profile, never by comparing kinds.
const (
	RKE2 Kind = "rke2"
	k3s  Kind = "k3s"
)

// Profile is one distribution's facts.
type Profile struct {
	Kind Kind
	// Name is the distribution as operators and its own docs write it.
	Name string
	// ConfigFile is the main config when nothing moves it; ConfigEnv is
	// the unit environment variable that moves it. Both distributions read
	// drop-ins from ConfigFile+".d" with the same "+" keys (RKE2 uses
	// k3s's pkg/configfilearg), so internal/rke2's merge serves both.
	ConfigFile, ConfigEnv string
	// DataDir is the data-dir unless the config moves it.
	DataDir string
	// Units are the fixed unit names, server first; nil when the units are
	// found (k3s's install.sh names them k3s, k3s-agent or INSTALL_K3S_NAME).
	Units []string
	// AnyUnit names any of its units in sentences ("no AnyUnit installed").
	AnyUnit string
	// Restart is the command that restarts it where its units are not
	// known by name.
	Restart string
	// KubeProxyEmbedded: kube-proxy (and kubelet) run inside the
	// distribution's own process (k3s's pkg/daemons/executor/embed.go),
	// not as a static pod. So the unit's environment is kube-proxy's
	// (IPTABLES_MODE is set there; there is no kube-proxy-extra-env), its
	// logs are the unit's journal, and it execs the first iptables on the
	// process's PATH, not the host alternative's through an image.
	KubeProxyEmbedded bool
	// Writers are the CNI components that run inside the process beside
	// kube-proxy and exec the same iptables, so their rules share its
	// backend (ownership's group) unless the config turns them off. k3s's
	// flannel and kube-router write iptables only (k3s#12849).
	Writers []cni.Owner
	// VersionFromBinary: the data dir names no release (k3s's is
	// data/<digest>), so only the binary tells the version.
	VersionFromBinary bool
	// VersionExample is the shape of the binary's --version line.
	VersionExample string
	// auxDir is, under the data dir, where the bundled iptables wrappers
	// and their sticky links are ("" when they live in an image).
	auxDir string
}

// Profile is k's profile; "" (or an unknown kind) counts as RKE2, the
// probe's default. Each call builds it anew, so its slices are the
// caller's to keep. A switch, not a map: the generator links this package,
// and a map would be built at every boot's start.
func (k Kind) Profile() Profile {
	if k == k3s {
		return Profile{
			Kind: k3s, Name: "k3s",
			ConfigFile: hostfs.K3sConfigFile, ConfigEnv: "K3S_CONFIG_FILE", DataDir: hostfs.K3sDataDir,
			AnyUnit:           "k3s unit (k3s.service, k3s-agent.service or k3s-<name>.service)",
			Restart:           "systemctl restart k3s, or k3s-agent on agents",
			KubeProxyEmbedded: true,
			Writers:           []cni.Owner{cni.OwnerFlannel, cni.OwnerKubeRouter},
			VersionFromBinary: true,
			VersionExample:    "k3s version vX.Y.Z+k3sN (...)",
			auxDir:            hostfs.K3sAuxDir,
		}
	}
	return Profile{
		Kind: RKE2, Name: "RKE2",
		ConfigFile: hostfs.RKE2ConfigFile, ConfigEnv: "RKE2_CONFIG_FILE", DataDir: hostfs.RKE2DataDir,
		Units:          []string{"rke2-server.service", "rke2-agent.service"},
		AnyUnit:        "rke2-server or rke2-agent unit",
		Restart:        "systemctl restart rke2-server (rke2-agent on agents)",
		VersionExample: "rke2 version vX.Y.Z+rke2rN (...)",
	}
}

// Parse reads a --distribution value; "" and "auto" mean "find it" ("").
func Parse(s string) (Kind, error) {
	switch s {
	case "", "auto":
		return "", nil
	case string(RKE2), string(k3s):
		return Kind(s), nil
	}
	return "", fmt.Errorf("distribution %q is not one of auto, rke2, k3s", s)
}

// Name, ConfigFile and DataDir are the profile's, as most callers want one.
func (k Kind) Name() string       { return k.Profile().Name }
func (k Kind) ConfigFile() string { return k.Profile().ConfigFile }
func (k Kind) DataDir() string    { return k.Profile().DataDir }

// AuxDir is where the bundled iptables wrappers are for dataDir ("" when
// the distribution has none on the host).
func (p Profile) AuxDir(dataDir string) string {
	if p.auxDir == "" {
		return ""
	}
	return path.Join(dataDir, p.auxDir)
}

// Unit is one installed service unit of the distribution.
type Unit struct {
	Name string // "k3s.service"
	Path string // the file systemd loads (the first unit directory that has it)
	// Binary is the program its ExecStart= runs (found units only: RKE2's
	// is read by the probe), which apply asks for its version.
	Binary string
}

// Distro is what Find learned: the distribution, its installed units, and
// a sentence saying how it was told.
type Distro struct {
	Kind  Kind
	Units []Unit
	// Source says how Kind was found, for detect and the logs.
	Source string
	// Note is set when the host has units of both distributions.
	Note string
}

// Installed reports whether a unit of the distribution is installed: what
// the generator needs before it probes anything.
func (d Distro) Installed() bool { return len(d.Units) > 0 }

// UnitNames are the installed units' names.
func (d Distro) UnitNames() []string {
	var names []string
	for _, u := range d.Units {
		names = append(names, u.Name)
	}
	return names
}
