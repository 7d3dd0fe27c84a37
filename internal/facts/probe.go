package facts

import "github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"

// Options tune a probe.
type Options struct {
	// LiveRules enables reading the kernel's current netfilter state
	// (netlink, legacy getsockopt). Only meaningful on the real host root.
	LiveRules bool
}

// Probe reads every fact under root. It never fails: unreadable sources
// become "unknown" values plus a sentence in Problems.
// TODO(facts): implemented by the probe work; placeholder signature.
func Probe(root hostfs.Root, opts Options) Facts {
	return Facts{}
}
