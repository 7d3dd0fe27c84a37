package facts

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The host's own nft and iptables versions matter for two known bugs:
// nft older than 1.0.1 crashes on kube-proxy's nftables rules
// (kubernetes#122743), and iptables 1.8.0-1.8.4 adds duplicate rules
// (k3s#3117). They are read from dpkg's status file (a file, so detect and
// the generator may read it); apply may also ask the binaries, bounded.

// DpkgStatus is dpkg's package database.
const DpkgStatus = "/var/lib/dpkg/status"

// maxDpkgStatus bounds dpkg's status file; a full desktop stays under 8 MiB.
const maxDpkgStatus = 32 << 20

// ToolVersion is a host tool's version and where it was read.
type ToolVersion struct {
	Version string `json:"version,omitempty"` // upstream version, e.g. "1.0.6"
	Source  string `json:"source,omitempty"`
}

// dpkgVersions reads the upstream versions of the installed packages named.
func (p *probe) dpkgVersions(names ...string) map[string]ToolVersion {
	data, ok := p.readMax(DpkgStatus, maxDpkgStatus, "the host's nft and iptables versions are unknown")
	if !ok {
		return nil
	}
	out := map[string]ToolVersion{}
	for _, name := range names {
		if v := DpkgInstalledVersion(data, name); v != "" {
			out[name] = ToolVersion{Version: v, Source: DpkgStatus + " (package " + name + ")"}
		}
	}
	return out
}

// DpkgInstalledVersion finds package name's stanza in a dpkg status file
// and returns its upstream version (epoch and Debian revision cut off) when
// the package is installed, else "".
func DpkgInstalledVersion(status []byte, name string) string {
	key := []byte("Package: " + name + "\n")
	for start := 0; start < len(status); {
		i := bytes.Index(status[start:], key)
		if i < 0 {
			return ""
		}
		i += start
		start = i + len(key)
		if i > 0 && status[i-1] != '\n' {
			continue
		}
		stanza := status[i:]
		if end := bytes.Index(stanza, []byte("\n\n")); end >= 0 {
			stanza = stanza[:end]
		}
		var installed bool
		var version string
		for _, line := range strings.Split(string(stanza), "\n") {
			if v, ok := strings.CutPrefix(line, "Status: "); ok {
				installed = strings.HasSuffix(strings.TrimSpace(v), " installed")
			}
			if v, ok := strings.CutPrefix(line, "Version: "); ok {
				version = upstreamVersion(strings.TrimSpace(v))
			}
		}
		if installed {
			return version
		}
	}
	return ""
}

// upstreamVersion cuts "1:1.8.7-1ubuntu5" to "1.8.7".
func upstreamVersion(v string) string {
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after
	}
	if i := strings.LastIndexByte(v, '-'); i > 0 {
		v = v[:i]
	}
	return v
}

// toolVersionLine finds "v1.0.6" in `nft --version` ("nftables v1.0.6
// (Lester Gooch #5)") and "v1.8.9" in `iptables --version`.
var toolVersionLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\bv([0-9]{1,4}\.[0-9]{1,4}(?:\.[0-9]{1,4})?)\b`)
})

// toolVersionTimeout bounds `nft --version`, which prints and exits.
const toolVersionTimeout = 2 * time.Second

// askVersion runs hostPath --version (apply only). ok is false when the
// binary is missing or prints no version.
func (p *probe) askVersion(hostPath string) (ToolVersion, bool) {
	onDisk, err := p.hostExecutable(hostPath)
	if err != nil {
		return ToolVersion{}, false
	}
	first, err := firstVersionLine(onDisk, nil, toolVersionTimeout)
	if err != nil {
		p.problem("%s --version: %s: its version is unknown.", hostPath, runProblem(err))
		return ToolVersion{}, false
	}
	m := toolVersionLine().FindStringSubmatch(first)
	if m == nil {
		return ToolVersion{}, false
	}
	return ToolVersion{Version: m[1], Source: hostPath + " --version"}, true
}

// VersionBelow reports whether dotted version v is older than want
// ("1.0.1"); an unparsable v is not below anything.
func VersionBelow(v string, want ...int) bool {
	parts := strings.Split(v, ".")
	for i, w := range want {
		n := 0
		if i < len(parts) {
			var err error
			// "1.8.4+git" and "1.0.6rc1" keep their leading digits.
			if n, err = strconv.Atoi(leadingDigits(parts[i])); err != nil {
				return false
			}
		}
		if n != w {
			return n < w
		}
	}
	return false
}

func leadingDigits(s string) string {
	for i, r := range s {
		if r < '0' || r > '9' {
			return s[:i]
		}
	}
	return s
}

// toolVersions fills the host nft and iptables versions per the options.
func (p *probe) toolVersions(u *Userspace) {
	if p.opts.ToolVersions {
		v := p.dpkgVersions("nftables", "iptables")
		u.Nft, u.Iptables = v["nftables"], v["iptables"]
	}
	if p.opts.RPMDatabase && u.Nft.Version == "" && u.Iptables.Version == "" {
		// EL ships iptables as iptables-nft (and iptables-legacy apart).
		v := p.rpmVersions("nftables", "iptables", "iptables-nft", "iptables-legacy")
		u.Nft = v["nftables"]
		for _, name := range []string{"iptables", "iptables-nft", "iptables-legacy"} {
			if tv, ok := v[name]; ok {
				u.Iptables = tv
				break
			}
		}
	}
	if p.opts.AskNft {
		for _, bin := range hostNftCommands {
			if tv, ok := p.askVersion(bin); ok {
				u.Nft = tv
				break
			}
		}
	}
}

// hostNftCommands are where distributions install nft.
var hostNftCommands = []string{"/usr/sbin/nft", "/sbin/nft"}
