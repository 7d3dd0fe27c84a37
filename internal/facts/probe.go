package facts

import (
	"errors"
	"fmt"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"io/fs"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Options tune a probe.
type Options struct {
	// Live reads the kernel's current netfilter state (netlink, legacy
	// getsockopt): live.Read, or nil to leave it unread. Only called on
	// the real host root.
	Live LiveReader
	// RKE2Binary asks the RKE2 binary the unit runs for its version
	// (rke2 --version, bounded), which wins over RKE2's data directory:
	// before RKE2's first start there is none, and right after an upgrade
	// it holds the old version. For apply only: the generator runs no
	// programs.
	RKE2Binary bool
	// RKE2BinaryTimeout bounds that run; 0 means 5 s.
	RKE2BinaryTimeout time.Duration
	// ToolVersions reads the host's nft and iptables versions from dpkg's
	// status file (a few MiB: detect and apply, not every boot's generator).
	ToolVersions bool
	// AskNft also runs the host's nft --version, bounded (apply only).
	AskNft bool
	// RPMDatabase reads nft's and iptables' versions from the root's RPM
	// database with this machine's rpm when dpkg's status file has
	// neither (certify: an image's own binaries are never run).
	RPMDatabase bool
	// HostServices reads the host's firewall and network managers' state
	// for detect's host-conflict findings; no decision depends on it, so
	// the generator skips it.
	HostServices bool
	// Distribution moves the config file and data dir read when no unit
	// names them to that distribution's ("": RKE2's).
	Distribution distro.Kind
	// Units are the distribution's units as distro.Find already found them
	// (nil: the probe finds them), so the boot path lists and reads the
	// unit directories once, not twice.
	Units []distro.Unit
	// KernelRelease is the kernel release to judge instead of the running
	// one (detect --kernel-release): on an image with several kernels, the
	// one it will boot. "" reads /proc/sys/kernel/osrelease, or on an image
	// (no such file) takes the kernel installed in it.
	KernelRelease string
}

// Probe reads every fact under root. It never fails: unreadable sources
// become "unknown" values plus a sentence in Problems (missing) or
// Unreadable (present but broken). It never writes and never runs a program.
func Probe(root hostfs.Root, opts Options) Facts {
	// The kernel config is read in line, not on a goroutine of its own:
	// since the parse stops after the netfilter menus and streams the
	// gunzip, it is a few hundred microseconds, less than what a second
	// thread cost the generator in start-up (bench/generator.sh, paired
	// runs: 0.97 -> 0.92 of systemd-getty-generator's wall time, CPU lower too).
	// Its sentences still come first, as before.
	kp := &probe{root: root, opts: opts}
	kernel := kp.kernelRelease()
	release := releaseForPaths(kernel)
	kp.kernelConfig(&kernel)

	if kp.image {
		// An image's binaries may be another architecture's, and are not
		// what runs the node: its version comes from the data directory.
		opts.RKE2Binary, opts.AskNft = false, false
	}
	p := &probe{root: root, opts: opts, image: kp.image}
	p.f.Modules = p.modules(release)
	p.f.Hardware = p.hardware()
	p.f.Userspace = p.userspace()
	p.f.LiveRules = p.liveRules(opts)
	p.f.RKE2 = p.rke2()
	p.f.Cmdline = p.cmdline()
	if opts.HostServices {
		p.f.HostServices = p.hostServices()
	} else {
		p.f.HostServices = HostServices{Enabled: []string{}}
	}
	p.toolVersions(&p.f.Userspace)
	p.f.PreviousPlan = p.previousPlan()

	p.f.Cost = p.cost(kernel.Release)
	p.f.Kernel = kernel
	p.f.Problems = append(kp.f.Problems, p.f.Problems...)
	p.f.Unreadable = append(kp.f.Unreadable, p.f.Unreadable...)
	p.f.Image = kp.image
	p.f.NotInImage = append(kp.f.NotInImage, p.f.NotInImage...)
	return p.f
}

// probe carries the root and collects the sentences while facts are read.
type probe struct {
	root hostfs.Root
	opts Options
	f    Facts
	// missing remembers what read found missing, so absent need not ask
	// the filesystem again.
	missing map[string]bool
	// image: the root runs no kernel (see Facts.Image).
	image bool
}

// notInImage records what an image root cannot tell.
func (p *probe) notInImage(format string, args ...any) {
	p.f.NotInImage = append(p.f.NotInImage, fmt.Sprintf(format, args...))
}

// problem records a missing source (a normal situation on many hosts).
func (p *probe) problem(format string, args ...any) {
	p.f.Problems = append(p.f.Problems, fmt.Sprintf(format, args...))
}

// unreadable records a source that exists but cannot be used.
func (p *probe) unreadable(format string, args ...any) {
	p.f.Unreadable = append(p.f.Unreadable, fmt.Sprintf(format, args...))
}

// read reads a host file. A missing file returns ok=false silently (the
// caller words the consequence); any other error is recorded as unreadable
// with the consequence and returns ok=false too.
func (p *probe) read(hostPath, consequence string) (data []byte, ok bool) {
	return p.readMax(hostPath, hostfs.MaxTextFile, consequence)
}

// readMax is read with another size cap than a text file's.
func (p *probe) readMax(hostPath string, max int64, consequence string) (data []byte, ok bool) {
	data, err := p.root.ReadFileMax(hostPath, max)
	if err == nil {
		return data, true
	}
	if isNotExist(err) {
		if p.missing == nil {
			p.missing = map[string]bool{}
		}
		p.missing[hostPath] = true
		return nil, false
	}
	p.unreadable("%s: %s: %s; %s", hostPath, errText(err), consequence, fixHint(hostPath, err))
	return nil, false
}

// absent reports whether hostPath is missing (as read treats it), so a
// caller can tell "missing" from "present but unreadable" after read.
func (p *probe) absent(hostPath string) bool {
	if p.missing[hostPath] {
		return true
	}
	_, err := p.root.Stat(hostPath)
	return err != nil && isNotExist(err)
}

// isNotExist treats "a path component is not a directory" like "missing":
// under a fixture root /proc may be a plain file, on a host it never is.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// errText drops the root-prefixed path from *fs.PathError so that messages
// name host paths only (and stay the same under any --root).
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// fixHint says what to do about a file that could not be read. Refused
// access is the usual case when not root (/proc/net/ip_tables_names is
// root's only), and then the fix is to run as root, not to touch the file;
// the kernel's own files under /proc and /sys are never the operator's to
// remove.
func fixHint(hostPath string, err error) string {
	switch {
	case errors.Is(err, hostfs.ErrNotRegular) || errors.Is(err, hostfs.ErrTooLarge):
		return "replace it with the right file or remove it"
	case errors.Is(err, fs.ErrPermission) && os.Geteuid() != 0:
		return "run rke2-proxy-backend as root: it reads files only root may read"
	case kernelFile(hostPath):
		return "the kernel refuses it; check the container's or security module's restrictions"
	}
	return "check the file's permissions or remove it"
}

// kernelFile reports whether hostPath is on procfs or sysfs.
func kernelFile(hostPath string) bool {
	return strings.HasPrefix(hostPath, "/proc/") || strings.HasPrefix(hostPath, "/sys/")
}
