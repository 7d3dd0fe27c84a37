package facts

// LiveReader reads the running kernel's rules (live.Read): where kube rules
// run now, with a sentence per source that could not be read. legacyV4 and
// legacyV6 are the legacy tables that exist (asking about any other creates
// it). A function in Options, not a flag, so that a caller that never reads
// live rules (the generator, at every boot) links no netfilter reader.
type LiveReader func(legacyV4, legacyV6 []string) (LiveRules, []string)

// liveRules reads where kube rules live now. It only runs on the real host
// root: under --root the files describe another host than the kernel.
func (p *probe) liveRules(opts Options) LiveRules {
	lr := LiveRules{KubeProxy: []string{}, KubeletHint: []string{}}
	if opts.Live == nil {
		return lr
	}
	if p.image {
		p.notInImage("Live rules: an image has none; the node's are read on the node (detect, verify).")
		return lr
	}
	if !p.root.IsHost() {
		p.problem("Live rules were not read: under --root %s the running kernel belongs to another host.", p.root.Dir())
		return lr
	}
	lr, problems := opts.Live(p.f.Userspace.LegacyTablesIPv4, p.f.Userspace.LegacyTablesIPv6)
	p.f.Problems = append(p.f.Problems, problems...)
	return lr
}
