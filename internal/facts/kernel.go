package facts

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/dotted"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// ParseRelease splits a kernel release such as "6.1.0-18-amd64", "4.4.302+"
// or "5.14.0-427.el9.x86_64" into numbers: major.minor (1-4 digits each)
// and an optional .patch (1-6 digits, 0 when absent) off its front; ok is
// false when it does not start with major.minor.
func ParseRelease(release string) (major, minor, patch int, ok bool) {
	major, minor, patch, _, ok = dotted.Prefix(release)
	return major, minor, max(patch, 0), ok
}

// releaseForPaths is the release when it can name files under /lib/modules
// and /boot: parsed and made of the characters kernel releases use. A
// garbage release is reported once and then not used to build paths.
func releaseForPaths(k Kernel) string {
	if k.Major == 0 {
		return ""
	}
	for i := 0; i < len(k.Release); i++ {
		if !releaseByte(k.Release[i]) {
			return ""
		}
	}
	return k.Release
}

// kernelRelease reads the release; kernelConfig fills in the config. A
// root without /proc/sys/kernel/osrelease but with a kernel installed in
// it runs no kernel: it is an image, judged by that kernel (or by
// --kernel-release's).
func (p *probe) kernelRelease() Kernel {
	k := Kernel{Config: unknownConfig()}
	if r := p.opts.KernelRelease; r != "" {
		if release, why := checkRelease([]byte(r)); why != "" {
			p.unreadable("--kernel-release %q: %s", r, why)
		} else {
			k.Release, k.ReleaseSource = release, "--kernel-release"
			k.Major, k.Minor, k.Patch, _ = ParseRelease(release)
			p.image = p.absent(hostfs.KernelOSRelease) && p.kernelInstalled(release)
		}
		return k
	}
	data, ok := p.read(hostfs.KernelOSRelease, "the kernel release is unknown")
	if !ok {
		if p.absent(hostfs.KernelOSRelease) {
			return p.imageKernel(k)
		}
	} else if release, why := checkRelease(data); why != "" {
		// Nothing of the file is quoted: whatever it is, it is not a release.
		p.unreadable("%s: %s: the kernel version is unknown; a real kernel always writes one, so check --root", hostfs.KernelOSRelease, why)
	} else {
		k.Release = release
		k.Major, k.Minor, k.Patch, _ = ParseRelease(release)
	}
	return k
}

// CheckRelease says what is wrong with release as a kernel release ("" when
// nothing is): what detect --kernel-release accepts.
func CheckRelease(release string) string {
	_, why := checkRelease([]byte(release))
	return why
}

// checkRelease takes the release out of osrelease's content, or says what
// is wrong with it. A NUL or any other byte outside the characters kernel
// releases use (the same set releaseForPaths trusts in paths) means the file
// is not what the kernel writes, and a partial match would be a guess.
func checkRelease(data []byte) (release, why string) {
	s := strings.TrimSpace(string(data))
	if s == "" {
		return "", "empty"
	}
	for i := 0; i < len(s); i++ {
		if !releaseByte(s[i]) {
			if s[i] == 0 {
				return "", "holds a NUL byte at offset " + strconv.Itoa(i) + ", which no kernel release has"
			}
			return "", "byte " + strconv.Itoa(i) + " is not a character kernel releases use (letters, digits and ._+~-)"
		}
	}
	if _, _, _, ok := ParseRelease(s); !ok {
		return "", "the release does not start with major.minor (e.g. 6.1.0-18-amd64)"
	}
	return s, ""
}

func releaseByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._+~-", c) >= 0
}

func unknownConfig() map[string]Tristate {
	cfg := make(map[string]Tristate, len(KernelOptions))
	for _, o := range KernelOptions {
		cfg[o] = Unknown
	}
	return cfg
}

// kernelConfig reads the first config candidate that can be parsed. A
// present but broken one is reported and the search goes on, so the
// generator still decides on the best information there is.
func (p *probe) kernelConfig(k *Kernel) {
	release := releaseForPaths(*k)
	candidates := hostfs.KernelConfigFiles(release)
	for _, path := range candidates {
		data, ok := p.readMax(path, hostfs.MaxKernelConfig, "the kernel config cannot be read from it")
		if !ok {
			continue
		}
		opts, err := parseConfigFile(path, data)
		if err != nil {
			p.unreadable("%s: %s: the kernel config cannot be read; fix or remove the file, or set the backend explicitly", path, err)
			continue
		}
		k.ConfigSource = path
		for _, o := range KernelOptions {
			if v, set := opts[o]; set {
				k.Config[o] = v
			} else {
				k.Config[o] = Absent // not in the config: the option does not exist or is off
			}
		}
		return
	}
	p.problem("No kernel config found (looked in %s): the kernel's netfilter options are unknown; only module lists can tell what the kernel supports.", strings.Join(candidates, ", "))
}

// wantedOptions is KernelOptions as a set, for the parser's filter, built
// at its first use: the generator, which links facts, needs none on a host
// without RKE2 or k3s.
var wantedOptions = sync.OnceValue(func() map[string]bool {
	m := make(map[string]bool, len(KernelOptions))
	for _, o := range KernelOptions {
		m[o] = true
	}
	return m
})

// maxConfigSize bounds a decompressed config (real ones are ~300 KB): a
// small gzip bomb must not expand into memory, and a config cut at the cap
// would read as "every later option is off".
const maxConfigSize = hostfs.MaxKernelConfig

func parseConfigFile(path string, data []byte) (map[string]Tristate, error) {
	if strings.HasSuffix(path, ".gz") {
		return parseGzipConfig(data)
	}
	opts, err := parseKernelConfig(throughNetfilter(data), wantedOptions())
	if err != nil {
		return nil, &configError{"not a kernel config", err}
	}
	return opts, nil
}

// netfilterEnd closes the last Kconfig menu holding an option we record:
// net/Kconfig sources the core, IPv4 and IPv6 netfilter menus in that
// order, and kconfig (since Linux 5.1) writes an "end of" line after each
// menu. Nothing past it matters to us, and stopping there skips about 60%
// of the gunzip and scan of /proc/config.gz on every generator run. Older
// kernels, and kernels without IPv6, have no such line and are read whole.
const netfilterEnd = "\n# end of IPv6: Netfilter Configuration\n"

// throughNetfilter cuts data after netfilterEnd, if present.
func throughNetfilter(data []byte) []byte {
	if i := bytes.Index(data, []byte(netfilterEnd)); i >= 0 {
		return data[:i+1]
	}
	return data
}

// gzipLineBuffer holds one decompressed line at a time; longer lines are
// gathered up to maxConfigLine.
const gzipLineBuffer = 8 << 10

// parseGzipConfig decompresses and parses line by line, as far as
// netfilterEnd: the generator's start-up is measured in page faults, and a
// decompressed copy of the config was ~40 of them.
func parseGzipConfig(data []byte) (map[string]Tristate, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, &configError{"not a gzip file", err}
	}
	br := bufio.NewReaderSize(zr, gzipLineBuffer)
	c := configParser{opts: map[string]Tristate{}, want: wantedOptions()}
	endLine := []byte(strings.Trim(netfilterEnd, "\n"))
	total := 0
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		total += len(chunk)
		if total > maxConfigSize {
			return nil, hostfs.TooLarge("decompresses to more", maxConfigSize)
		}
		if err == bufio.ErrBufferFull {
			if len(long)+len(chunk) <= maxConfigLine {
				long = append(long, chunk...)
				continue
			}
			// The parser words it; one byte past the limit is enough.
			chunk, long = append(long, chunk...)[:maxConfigLine+1], nil
			err = nil
		} else if long != nil {
			chunk, long = append(long, chunk...), nil
		}
		if err != nil && err != io.EOF {
			return nil, &configError{"not a gzip file", err}
		}
		line := bytes.TrimSuffix(chunk, []byte("\n"))
		if c.n > 0 && bytes.Equal(line, endLine) { // as throughNetfilter: after a line
			break
		}
		if len(chunk) > 0 {
			if perr := c.line(line); perr != nil {
				return nil, &configError{"not a kernel config", perr}
			}
		}
		if err == io.EOF {
			break
		}
	}
	opts, err := c.result()
	if err != nil {
		return nil, &configError{"not a kernel config", err}
	}
	return opts, nil
}

// configError renders as "not a gzip file (gzip: invalid header)".
type configError struct {
	what string
	err  error
}

func (e *configError) Error() string { return e.what + " (" + e.err.Error() + ")" }
func (e *configError) Unwrap() error { return e.err }
