package facts

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// dataDirPattern matches the runtime directories RKE2 extracts into
// <data-dir>/data: the runtime image tag plus a 12-hex digest
// (rancher/rke2 pkg/bootstrap releaseRefDigest), e.g. v1.31.2-rke2r1-0a1b2c3d4e5f.
// Compiled on first use: most boots have one data directory or none.
var dataDirPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(v[0-9]+\.[0-9]+\.[0-9]+)-(rke2r([0-9]+))-[0-9a-f]{12}$`)
})

func (p *probe) rke2() RKE2 {
	r := p.rke2Config()
	dataDir := r.DataDir
	r.Version, r.VersionSource = p.version(r.Units, dataDir)
	if p.opts.Distribution.Profile().KubeProxyEmbedded {
		r.Distribution, r.K3sAuxTarget = p.opts.Distribution, p.k3sAuxTarget(dataDir)
		r.K3sNft = p.k3sNft(dataDir)
		n := r.k3sNetwork()
		r.K3sNetwork, r.CNI = &n, cni.K3sSetup(n.Flannel, n.FlannelSource)
	} else {
		r.CNI = p.cniSetup(r.Config, r.DataDir)
	}
	if r.Version != "" {
		if kv, err := rke2.ParseVersion(r.Version); err == nil {
			r.Kubernetes = kv
		}
	}
	return r
}

// rke2Config finds RKE2's units, the config file they name, the effective
// config and the data-dir it sets.
func (p *probe) rke2Config() RKE2 {
	r := RKE2{Units: p.rke2Units(), ConfigFile: p.opts.Distribution.ConfigFile()}
	for _, u := range r.Units { // server first: it is the role that runs when both exist
		if u.ConfigFile != "" {
			r.ConfigFile = u.ConfigFile
			break
		}
	}
	eff, err := rke2.LoadEffectiveOf(p.root, r.ConfigFile, p.opts.Distribution.Name())
	if err != nil {
		if errors.Is(err, fs.ErrPermission) && os.Geteuid() != 0 {
			// RKE2 runs as root and reads it; only this run cannot.
			p.unreadable("%s: %s's config cannot be read by this user; %s", err, p.opts.Distribution.Name(), fixHint(r.ConfigFile, err))
		} else {
			p.unreadable("%s: %s's config cannot be read, and %s will refuse it too; fix the file", err, p.opts.Distribution.Name(), p.opts.Distribution.Name())
		}
		eff = rke2.Merge(nil)
	} else if len(eff.Files) == 0 {
		p.problem("No %s config at %s or in %s.d: %s runs with its defaults (kube-proxy in iptables mode).", p.opts.Distribution.Name(), r.ConfigFile, r.ConfigFile, p.opts.Distribution.Name())
	}
	r.Config = eff
	r.DataDir = p.opts.Distribution.DataDir()
	if d, ok := eff.Values["data-dir"].(string); ok && path.IsAbs(d) {
		r.DataDir = d
	}
	return r
}

// version is the binary's answer when apply may ask it, else what RKE2's
// data directory says. When both are known and differ, the binary wins and
// the source says why: the data directory is what the last start left.
func (p *probe) version(units []RKE2Unit, dataDir string) (version, source string) {
	if p.image {
		// A pipeline rarely starts RKE2 in the image: its binary says
		// the version, read as bytes (it may be another architecture's).
		quiet := &probe{root: p.root, opts: p.opts}
		if v, src := quiet.rke2Version(dataDir); v != "" {
			return v, src
		}
		if v, src, ok := p.imageBinaryVersion(units); ok {
			return v, src
		}
	}
	if !p.opts.RKE2Binary {
		return p.rke2Version(dataDir)
	}
	timeout := p.opts.RKE2BinaryTimeout
	if timeout <= 0 {
		timeout = rke2VersionTimeout
	}
	v, src, ok := p.binaryVersion(units, timeout)
	if !ok {
		return p.rke2Version(dataDir)
	}
	// The data directory only for the comparison: its absence is normal
	// now and not worth a sentence.
	quiet := &probe{root: p.root}
	if old, oldSrc := quiet.rke2Version(dataDir); old != "" && old != v {
		src += " (the binary the unit runs, which " + p.opts.Distribution.Name() + " is about to start; " + oldSrc + " holds " + old + ", left by the release that ran before)"
	}
	return v, src
}

// rke2Version learns RKE2's version from files its first start leaves: the
// <data-dir>/bin symlink to the current data/<tag>-<digest>/bin, else the
// newest data/<tag>-<digest> directory. RPM and tarball installs leave no
// version file (only the binary knows it, and the generator runs no
// programs), so before RKE2's first start, or while /var is not mounted at
// generator time, the version is unknown and apply settles it later.
func (p *probe) rke2Version(dataDir string) (version, source string) {
	binLink := path.Join(dataDir, "bin")
	if target, err := p.root.Readlink(binLink); err == nil {
		if v, ok := versionFromDataDir(path.Base(path.Dir(path.Clean(target)))); ok {
			return v, binLink + " -> " + target
		}
	}
	dataRoot := path.Join(dataDir, "data")
	entries, err := p.root.ReadDir(dataRoot)
	if err != nil && !isNotExist(err) {
		p.unreadable("%s: %s: the %s version is unknown; check the directory's permissions", dataRoot, errText(err), p.opts.Distribution.Name())
		return "", ""
	}
	best, bestName := "", ""
	for _, e := range entries {
		if v, ok := versionFromDataDir(e.Name()); ok && e.IsDir() && (best == "" || newerRKE2(v, best)) {
			best, bestName = v, e.Name()
		}
	}
	if best == "" {
		p.problem("No %s runtime in %s: %s has not started here yet, or /var is not mounted (normal at generator time); the Kubernetes version is unknown.", p.opts.Distribution.Name(), dataRoot, p.opts.Distribution.Name())
		return "", ""
	}
	return best, path.Join(dataRoot, bestName)
}

// versionFromDataDir turns "v1.31.2-rke2r1-0a1b2c3d4e5f" into "v1.31.2+rke2r1".
func versionFromDataDir(name string) (string, bool) {
	m := dataDirPattern().FindStringSubmatch(name)
	if m == nil {
		return "", false
	}
	return m[1] + "+" + m[2], true
}

// newerRKE2 compares two "vX.Y.Z+rke2rN" versions.
func newerRKE2(a, b string) bool {
	ka, _ := rke2.ParseVersion(a)
	kb, _ := rke2.ParseVersion(b)
	if ka != kb {
		if ka.Major != kb.Major {
			return ka.Major > kb.Major
		}
		if ka.Minor != kb.Minor {
			return ka.Minor > kb.Minor
		}
		return ka.Patch > kb.Patch
	}
	return rke2Revision(a) > rke2Revision(b)
}

func rke2Revision(v string) int {
	_, rev, _ := strings.Cut(v, "+rke2r")
	n, _ := strconv.Atoi(rev)
	return n
}
