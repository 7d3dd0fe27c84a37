// Package rke2 knows RKE2's own files: its config (main file plus
// config.yaml.d drop-ins, merged exactly as RKE2 merges them), the drop-in
// we write, and RKE2 / Kubernetes version strings.
package rke2

// KubeVersion is a Kubernetes minor version; the zero value means unknown.
type KubeVersion struct {
	Major int `json:"major"`
	Minor int `json:"minor"`
	// Patch is the patch release when known from RKE2's version (-1 when
	// only the minor is known); it matters for the kube-proxy image's nft binary.
	Patch int `json:"patch"`
}

// Known reports whether the version was learned.
func (v KubeVersion) Known() bool { return v.Major != 0 }

// AtLeast reports whether v >= major.minor. Unknown is never at least anything.
func (v KubeVersion) AtLeast(major, minor int) bool {
	if !v.Known() {
		return false
	}
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// Effective is RKE2's merged configuration: each key's final value (a
// string, bool, number or []string) plus which file last set it.
type Effective struct {
	Values map[string]any    `json:"values"`
	Origin map[string]string `json:"origin"`
	// ItemOrigin holds, for each list-valued key, the file each item came
	// from: with "key+" appends one list mixes files, and only this tells an
	// operator's pin in config.yaml from an item our own drop-in added.
	ItemOrigin map[string][]string `json:"item_origin,omitempty"`
	// Line and ItemLine are, like Origin and ItemOrigin, the line of the
	// key that set each value or list item in its file (0 when unknown, as
	// for hand-built Files), so a finding can say which line to change.
	// Not in detect's JSON: the findings name their lines themselves.
	Line     map[string]int   `json:"-"`
	ItemLine map[string][]int `json:"-"`
	// Assigned is every replacing assignment of each key (one without
	// "+"), in merge order: a single-value key's history, so a caller can
	// ask what it would be without its own drop-in (LastExcept).
	Assigned map[string][]Setting `json:"-"`
	// Files are the files read, in merge order.
	Files []string `json:"files"`
}
