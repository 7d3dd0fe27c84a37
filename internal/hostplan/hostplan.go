// Package hostplan is what this host should run, from its facts and its
// config: the one place the read-only probe, the operator config and the
// decision are composed for a root. The generator, apply, detect and bench
// start here, each with the probe its moment can afford.
package hostplan

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Host is where the facts and the config are read.
type Host struct {
	Root hostfs.Root
	// ConfigFile is the operator config under Root ("" is hostfs.ConfigFile).
	ConfigFile string
	// Environ is the process environment (os.Environ()): the config's
	// RKE2_PROXY_BACKEND* variables.
	Environ []string
	// Distribution is the one the node runs ("": RKE2): its config file
	// and data dir are probed.
	Distribution distro.Kind
	// Units are its units as distro.Find found them (nil: the probe finds
	// them again).
	Units []distro.Unit
	// KernelRelease judges this kernel release instead of the running one
	// (detect --kernel-release); "" is the running kernel, or on an image
	// root (no /proc/sys/kernel/osrelease) the one installed in it.
	KernelRelease string
}

// The probes of each flow: what it reads beyond the facts every decision
// needs, and why it can afford it.
var (
	// Boot is the generator's: live rules are left out (at boot there are
	// none, and on daemon-reload the previous plan keeps the node where it
	// is), and it runs no programs.
	Boot = facts.Options{}
	// Apply asks the RKE2 binary for its version (its data directory is
	// empty before the first start and stale after an upgrade), and reads
	// the nft and iptables versions the trial and the decision weigh.
	Apply = facts.Options{RKE2Binary: true, ToolVersions: true, AskNft: true}
	// Detect shows everything: the live rules per backend (its caller
	// adds their reader, live.Read: the generator links this package, and
	// no netfilter reader), the tools' versions and the host's firewall and network managers; like apply it
	// asks the RKE2 binary its version, so on a node mid-upgrade detect
	// judges the release about to start (a gate it removed), not the last.
	Detect = facts.Options{ToolVersions: true, HostServices: true, RKE2Binary: true}
)

// Plan is one host's facts, the effective config and the decision on them.
type Plan struct {
	Facts    facts.Facts
	Config   config.Config
	Decision decide.Decision
	// Certified is this machine against its image's certificate (nil when
	// the image has none).
	Certified *Certification
}

// Load probes the host, loads the operator config (the file, the
// environment, and the kernel command line the probe read) and decides.
//
// The probe never fails: missing or broken sources are in Facts.Problems and
// Facts.Unreadable, and each caller chooses how strict to be about them. The
// error is the operator config's (it names the file or variable, the key
// and the value); Facts is valid even then, Config and Decision are zero.
func Load(h Host, probe facts.Options) (Plan, error) {
	file := h.ConfigFile
	if file == "" {
		file = hostfs.ConfigFile
	}
	probe.Distribution, probe.Units, probe.KernelRelease = h.Distribution, h.Units, h.KernelRelease
	f := facts.Probe(h.Root, probe)
	c, err := config.Load(h.Root, file, h.Environ, f.Cmdline)
	if err != nil {
		return Plan{Facts: f}, err
	}
	return Plan{Facts: f, Config: c, Decision: decide.Decide(f, c), Certified: certification(h.Root, f)}, nil
}
