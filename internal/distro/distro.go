// Package distro says which Kubernetes distribution runs kube-proxy on a
// node, RKE2 or k3s, and where each keeps what this tool reads and writes:
// the config file and its drop-in directory, the data directory, the
// service units, and how kube-proxy's environment reaches it. Everything
// above the probe asks it instead of hard-coding RKE2's names.
package distro

import (
	"fmt"
	"path"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Kind is a distribution's name, as --distribution takes it.
type Kind string

const (
	RKE2 Kind = "rke2"
	K3s  Kind = "k3s"
)

// Parse reads a --distribution value; "" and "auto" mean "find it" ("").
func Parse(s string) (Kind, error) {
	switch s {
	case "", "auto":
		return "", nil
	case string(RKE2), string(K3s):
		return Kind(s), nil
	}
	return "", fmt.Errorf("distribution %q is not one of auto, rke2, k3s", s)
}

// Name is the distribution as operators and its own docs write it
// ("RKE2", "k3s"); "" counts as RKE2, the probe's default.
func (k Kind) Name() string {
	if k == K3s {
		return "k3s"
	}
	return "RKE2"
}

// ConfigFile is the distribution's main config when nothing moves it; both
// read drop-ins from ConfigFile+".d" with the same "+" keys (RKE2 uses
// k3s's pkg/configfilearg), so internal/rke2's merge serves both.
func (k Kind) ConfigFile() string {
	if k == K3s {
		return hostfs.K3sConfigFile
	}
	return hostfs.RKE2ConfigFile
}

// DataDir is the distribution's data-dir unless its config moves it.
func (k Kind) DataDir() string {
	if k == K3s {
		return hostfs.K3sDataDir
	}
	return hostfs.RKE2DataDir
}

// EnvInConfig reports whether kube-proxy's environment (IPTABLES_MODE) is
// set in the distribution's config: RKE2 runs kube-proxy as a static pod
// and passes kube-proxy-extra-env to it; k3s runs kube-proxy inside its own
// process (pkg/daemons/executor/embed.go), so the k3s unit's Environment=
// is kube-proxy's, and k3s has no such key.
func (k Kind) EnvInConfig() bool { return k != K3s }

// AuxDir is where k3s-root's iptables wrappers and their sticky links are
// for dataDir ("" on RKE2, whose wrappers live in the kube-proxy image).
func (k Kind) AuxDir(dataDir string) string {
	if k != K3s {
		return ""
	}
	return path.Join(dataDir, hostfs.K3sAuxDir)
}

// Unit is one installed service unit of the distribution.
type Unit struct {
	Name string // "k3s.service"
	Path string // the file systemd loads (the first unit directory that has it)
	// Binary is the program its ExecStart= runs (k3s only: RKE2's is
	// read by the probe), which apply asks for its version.
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
