// Package certify judges a node image before any node boots it: the same
// probe, config and decision the generator runs at boot, on an image root
// whose kernel is the one installed in it (hostplan, facts' image probe),
// turned into a verdict per backend with what the image lacks and what to
// add, recorded in the image (record/certified) for its first boot to
// compare with the machine it boots on.
package certify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/certified"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

// Probe is certify's: the tools' versions from the image's package
// databases (dpkg's status file, RPM's database through this machine's
// rpm), and no program of the image is run (facts never runs an image's
// binaries: its RKE2 version is read from the binary's bytes).
var Probe = facts.Options{ToolVersions: true, RPMDatabase: true}

// Image judges the image at h.Root. The error is the operator config's
// (it names the file, key and value): no verdict is made on a config the
// node would refuse.
func Image(h hostplan.Host) (certified.Record, error) {
	// The builder's environment is not the node's: only the image's
	// config file speaks for it.
	h.Environ = nil
	p, err := hostplan.Load(h, Probe)
	if err != nil {
		return certified.Record{}, err
	}
	return Judge(p), nil
}

// Judge turns a plan of an image into its certificate.
func Judge(p hostplan.Plan) certified.Record {
	f, d := p.Facts, p.Decision
	r := certified.Record{
		Schema:       certified.Schema,
		Tool:         version.Version,
		Backend:      string(d.Backend),
		Asked:        p.Config.Backend,
		Kernel:       kernelOf(f),
		Userspace:    userspaceOf(f),
		Distribution: distributionOf(f),
		Reasons:      d.Reasons,
		Problems:     append(slices.Clone(f.NotInImage), f.Problems...),
	}
	if r.Asked == "" {
		r.Asked = "auto"
	}
	if r.Asked != "auto" && r.Asked != "off" {
		r.AskedBy = p.Config.File
	}
	if d.Source == decide.SourceRKE2Config {
		r.Asked, r.AskedBy = string(d.Backend), strings.Join(d.Respected, "; ")
	}
	judged := map[backend.Backend]certified.Backend{}
	for _, j := range decide.Judge(f) {
		b := backendOf(f, j)
		judged[j.Backend] = b
		r.Backends = append(r.Backends, b)
	}
	r.Verdict, r.Why = verdict(f, d, judged)
	return r
}

// verdict is the image's answer and its one-sentence why.
func verdict(f facts.Facts, d decide.Decision, judged map[backend.Backend]certified.Backend) (string, string) {
	switch {
	case f.Kernel.Release == "":
		return certified.CannotTell, "no kernel is installed in the image (no /lib/modules/<release> beside /boot/config-<release> or /boot/vmlinuz-<release>): install the kernel package before certifying"
	case len(f.Unreadable) > 0:
		return certified.CannotTell, "some of the image's files exist but cannot be read: " + strings.Join(f.Unreadable, "; ")
	case d.Disabled:
		return certified.Runnable, "rke2-proxy-backend leaves kube-proxy alone on this image: " + strings.Join(d.Reasons, " ")
	case len(d.Refused) > 0:
		return certified.NotRunnable, "the image cannot run what its config asks for: " + strings.Join(d.Refused, "; ")
	}
	b, ok := judged[d.Backend]
	switch {
	case !ok:
		return certified.CannotTell, "no backend was decided"
	case b.Runnable && b.Confirmed:
		how := "auto-detection picks it"
		if d.Source != "auto" {
			how = "its config asks for it"
		}
		return certified.Runnable, fmt.Sprintf("the image can run %s (%s) on kernel %s", d.Backend, how, f.Kernel.Release)
	case b.Runnable:
		return certified.CannotTell, fmt.Sprintf("%s is not ruled out, but not everything it needs could be read: %s", d.Backend, strings.Join(b.Reasons, " "))
	case d.Source == "auto":
		return certified.NotRunnable, "no backend can run on this image: " + notRunnable(judged)
	}
	return certified.NotRunnable, fmt.Sprintf("the image cannot run %s, which its config asks for: %s", d.Backend, strings.Join(b.Reasons, " "))
}

func notRunnable(judged map[backend.Backend]certified.Backend) string {
	var parts []string
	for _, b := range backend.All {
		parts = append(parts, fmt.Sprintf("%s: %s", b, strings.Join(judged[b].Reasons, " ")))
	}
	return strings.Join(parts, "; ")
}

// kernelOf is the image's kernel with the netfilter modules it has.
func kernelOf(f facts.Facts) certified.Kernel {
	k := certified.Kernel{Release: f.Kernel.Release, ReleaseSource: f.Kernel.ReleaseSource, ConfigSource: f.Kernel.ConfigSource, Modules: []string{}}
	for _, b := range backend.All {
		for _, mod := range b.Modules() {
			if facts.HasModule(f.Modules.Builtin, mod) || facts.HasModule(f.Modules.Available, mod) || facts.HasModule(f.Modules.Loaded, mod) {
				k.Modules = append(k.Modules, mod)
			}
		}
	}
	slices.Sort(k.Modules)
	k.Modules = slices.Compact(k.Modules)
	return k
}

func userspaceOf(f facts.Facts) certified.Userspace {
	u := f.Userspace
	out := certified.Userspace{Iptables: u.IptablesAlternative, IptablesVersion: u.Iptables.Version, NftVersion: u.Nft.Version}
	var src []string
	for _, s := range []string{u.Iptables.Source, u.Nft.Source} {
		if s != "" && !slices.Contains(src, s) {
			src = append(src, s)
		}
	}
	out.VersionSource = strings.Join(src, ", ")
	return out
}

func distributionOf(f facts.Facts) certified.Distribution {
	d := certified.Distribution{Name: f.RKE2.Distribution.Name(), Version: f.RKE2.Version, VersionSource: f.RKE2.VersionSource}
	for _, u := range f.RKE2.Units {
		d.Units = append(d.Units, u.Name)
	}
	return d
}
