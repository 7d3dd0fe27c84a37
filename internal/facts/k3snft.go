package facts

import (
	"path"
	"slices"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// On k3s, kube-proxy runs inside the k3s process and its nftables mode
// execs `nft` from k3s's PATH: <data>/bin, then the host's PATH, then
// <data>/bin/aux, or with prefer-bundled-bin <data>/bin, <data>/bin/aux,
// then the host's PATH (k3s-io/k3s cmd/k3s/main.go). k3s-root bundles nft
// in bin/aux from v0.14.1 on (k3s-io/k3s-root scripts/package, 1f35cfd),
// and none in bin. The probe stats each place (a handful of stats, no
// reads); decide orders them as k3s does, since whether prefer-bundled-bin
// is in effect is its business.

// K3sNft is where an nft is on k3s's PATH, by PATH part.
type K3sNft struct {
	// Extracted is true when k3s has unpacked its binaries
	// (<data>/data/current/bin exists): before that, whether bin/aux
	// holds an nft cannot be told.
	Extracted bool `json:"extracted"`
	// Bin and Aux are <data>/data/current/bin/nft and .../bin/aux/nft
	// when they are executable files ("" otherwise).
	Bin string `json:"bin,omitempty"`
	Aux string `json:"aux,omitempty"`
	// Host is the first executable nft in the PATH systemd gives the k3s
	// unit ("" when none).
	Host string `json:"host,omitempty"`
	// Versions are the found nfts' versions where apply asked them, by
	// path; the host's /usr/sbin/nft and /sbin/nft are Userspace.Nft.
	Versions map[string]ToolVersion `json:"versions,omitempty"`
}

// K3sUnitPath is the PATH systemd gives a service that sets none (k3s's
// units set none; systemd's default, with the split-usr dirs kept for
// older distributions).
var K3sUnitPath = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// k3sNft finds the nfts on k3s's PATH for dataDir; apply (AskNft) also
// asks each found one its version, bounded.
func (p *probe) k3sNft(dataDir string) *K3sNft {
	aux := p.opts.Distribution.Profile().AuxDir(dataDir)
	bin := path.Dir(aux)
	n := &K3sNft{}
	if st, err := p.root.Stat(bin); err == nil && st.IsDir() {
		n.Extracted = true
		n.Bin = p.executable(path.Join(bin, "nft"))
		n.Aux = p.executable(path.Join(aux, "nft"))
	}
	for _, dir := range K3sUnitPath {
		if n.Host = p.executable(path.Join(dir, "nft")); n.Host != "" {
			break
		}
	}
	if !p.opts.AskNft {
		return n
	}
	for _, found := range []string{n.Bin, n.Aux, n.Host} {
		if found == "" || slices.Contains(hostNftCommands, found) {
			continue // toolVersions asks those already (Userspace.Nft)
		}
		if tv, ok := p.askVersion(found); ok {
			if n.Versions == nil {
				n.Versions = map[string]ToolVersion{}
			}
			n.Versions[found] = tv
		}
	}
	return n
}

// executable is hostPath when it is an executable regular file, else "".
func (p *probe) executable(hostPath string) string {
	if _, err := p.hostExecutable(hostPath); err != nil {
		return ""
	}
	return hostPath
}

// K3sPrefersBundled reports whether prefer-bundled-bin is in effect at
// k3s's next start: the operator's setting when there is one, else what
// apply writes (it sets it where the release knows the key). known is
// false when neither tells (no operator setting, k3s's version unknown:
// the generator's case, since apply asks the binary).
func (r RKE2) K3sPrefersBundled() (yes, known bool) {
	main := r.ConfigFile
	if main == "" {
		main = r.Distribution.ConfigFile()
	}
	if op, set := r.Config.LastExcept(rke2.KeyPreferBundledBin, rke2.DropInPath(main)); set {
		return op.Value == "true", true
	}
	return rke2.SupportsPreferBundledBin(r.Kubernetes), r.Kubernetes.Known()
}

// Where an nft sits on k3s's PATH.
const (
	K3sNftBin  = "bin"     // <data>/data/current/bin (k3s-root puts none there)
	K3sNftAux  = "bin/aux" // k3s-root's bundled nft
	K3sNftHost = "host"    // the host's PATH
)

// K3sNftRun is the nft kube-proxy's nftables mode would exec on k3s's
// PATH: Path "" when none is found. Shadowable is set when k3s has not
// extracted its binaries yet and bin/aux comes before Path (or nothing
// was found): an nft k3s unpacks there would run instead.
type K3sNftRun struct {
	Path, Dir    string
	Version      ToolVersion
	BundledFirst bool
	Shadowable   bool
	// AuxPath is where k3s's bundled nft is (or would be).
	AuxPath string
}

// K3sRunningNft finds it, in k3s's PATH order (k3s-io/k3s cmd/k3s/main.go).
func (r RKE2) K3sRunningNft(hostNft ToolVersion) K3sNftRun {
	n := K3sNft{}
	if r.K3sNft != nil {
		n = *r.K3sNft
	}
	dataDir := r.DataDir
	if dataDir == "" {
		dataDir = r.Distribution.DataDir()
	}
	run := K3sNftRun{AuxPath: path.Join(r.Distribution.Profile().AuxDir(dataDir), "nft")}
	run.BundledFirst, _ = r.K3sPrefersBundled()
	order := []string{K3sNftBin, K3sNftHost, K3sNftAux}
	if run.BundledFirst {
		order = []string{K3sNftBin, K3sNftAux, K3sNftHost}
	}
	found := map[string]string{K3sNftBin: n.Bin, K3sNftAux: n.Aux, K3sNftHost: n.Host}
	for i, dir := range order {
		p := found[dir]
		if p == "" {
			continue
		}
		run.Path, run.Dir, run.Version = p, dir, n.Versions[p]
		if dir == K3sNftHost && run.Version.Version == "" && slices.Contains(hostNftCommands, p) {
			run.Version = hostNft // dpkg's nftables package installs these
		}
		run.Shadowable = !n.Extracted && slices.Index(order, K3sNftAux) < i
		return run
	}
	run.Shadowable = !n.Extracted
	return run
}
