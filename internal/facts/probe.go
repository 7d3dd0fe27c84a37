package facts

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Options tune a probe.
type Options struct {
	// LiveRules enables reading the kernel's current netfilter state
	// (netlink, legacy getsockopt). Only meaningful on the real host root.
	LiveRules bool
}

// Probe reads every fact under root. It never fails: unreadable sources
// become "unknown" values plus a sentence in Problems (missing) or
// Unreadable (present but broken). It never writes and never runs a program.
func Probe(root hostfs.Root, opts Options) Facts {
	// The kernel config (often /proc/config.gz: gunzip and a 10,000-line
	// scan) is CPU work that would otherwise be half of every boot's
	// generator run; it goes on beside the file-by-file probes below. Its
	// sentences are collected apart and put first, so the output is the
	// same as a serial probe's.
	kp := &probe{root: root}
	kernel := kp.kernelRelease()
	release := releaseForPaths(kernel)
	done := make(chan struct{})
	go func() {
		defer close(done)
		kp.kernelConfig(&kernel)
	}()

	p := &probe{root: root}
	p.f.Modules = p.modules(release)
	p.f.Hardware = p.hardware()
	p.f.Userspace = p.userspace()
	p.f.LiveRules = p.liveRules(opts)
	p.f.RKE2 = p.rke2()
	p.f.Cmdline = p.cmdline()
	p.f.PreviousPlan = p.previousPlan()

	<-done
	p.f.Cost = p.cost(kernel.Release)
	p.f.Kernel = kernel
	p.f.Problems = append(kp.f.Problems, p.f.Problems...)
	p.f.Unreadable = append(kp.f.Unreadable, p.f.Unreadable...)
	return p.f
}

// probe carries the root and collects the sentences while facts are read.
type probe struct {
	root hostfs.Root
	f    Facts
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
	data, err := p.root.ReadFile(hostPath)
	if err == nil {
		return data, true
	}
	if isNotExist(err) {
		return nil, false
	}
	p.unreadable("%s: %s: %s; check the file's permissions or remove it", hostPath, errText(err), consequence)
	return nil, false
}

// absent reports whether hostPath is missing (as read treats it), so a
// caller can tell "missing" from "present but unreadable" after read.
func (p *probe) absent(hostPath string) bool {
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
