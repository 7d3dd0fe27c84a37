// Package certified is the record `certify --root IMAGE` leaves in a node
// image: what the image's kernel, userspace, RKE2 or k3s and operator
// config can run, judged before any node boots it. At boot the generator
// and detect compare the booted machine with it (Differences).
//
// It lives under /usr/lib, not /var: it describes the image's /usr (its
// kernel modules, its binaries), travels with it through A/B and sysext
// updates, and is replaced with the next image, whose pipeline certifies
// again; a record in /var would outlive the /usr it was made for.
package certified

// File is where certify writes the record under the image root.
const File = "/usr/lib/rke2-proxy-backend/certified.json"

// Schema versions the record for every reader (the generator, detect,
// operators' scripts). Raise it only when a key is removed, renamed or
// changes meaning; adding a key keeps it.
const Schema = 1

// Verdicts of a certification, with certify's exit codes.
const (
	// Runnable: the image can run the backend its config asks for, or
	// auto finds one (exit 0).
	Runnable = "runnable"
	// NotRunnable: it cannot (exit 1).
	NotRunnable = "not-runnable"
	// CannotTell: a source the verdict needs is missing or unreadable
	// (exit 2).
	CannotTell = "cannot-tell"
)

// Record is the certificate, and certify's -o json document.
type Record struct {
	Schema int `json:"schema"`
	// Tool is the rke2-proxy-backend version that certified.
	Tool string `json:"tool_version"`
	// Verdict is Runnable, NotRunnable or CannotTell; Why says why in one
	// sentence.
	Verdict string `json:"verdict"`
	Why     string `json:"why"`
	// Backend is what the image's first boot will run ("" when none).
	Backend string `json:"backend,omitempty"`
	// Asked is what the image's config asks for: auto, a backend, or off;
	// AskedBy names where (the operator config file, RKE2's config).
	Asked   string `json:"asked"`
	AskedBy string `json:"asked_by,omitempty"`
	Kernel  Kernel `json:"kernel"`
	// Userspace is the image's iptables and nft, read without running them.
	Userspace Userspace `json:"userspace"`
	// Distribution is the image's RKE2 or k3s.
	Distribution Distribution `json:"distribution"`
	// Backends judges every backend, in the decision's order.
	Backends []Backend `json:"backends"`
	// Reasons are the decision's reasons for Backend, in order.
	Reasons []string `json:"reasons"`
	// Problems are the probe's missing sources and what an image cannot
	// tell, for the reader who asks why a verdict is what it is.
	Problems []string `json:"problems,omitempty"`
}

// Kernel is the image's kernel as certified.
type Kernel struct {
	Release       string `json:"release"`
	ReleaseSource string `json:"release_source,omitempty"`
	ConfigSource  string `json:"config_source,omitempty"`
	// Modules are the netfilter modules any backend loads that the image's
	// kernel has (built in or in its module tree), sorted: what the booted
	// machine must still have.
	Modules []string `json:"modules"`
}

// Userspace is the image's netfilter tools.
type Userspace struct {
	// Iptables is legacy, nft or unknown: where the image's iptables
	// command points.
	Iptables        string `json:"iptables"`
	IptablesVersion string `json:"iptables_version,omitempty"`
	NftVersion      string `json:"nft_version,omitempty"`
	// VersionSource says where the versions were read (a package database).
	VersionSource string `json:"version_source,omitempty"`
}

// Distribution is the image's Kubernetes distribution.
type Distribution struct {
	Name          string   `json:"name"` // RKE2 or k3s
	Version       string   `json:"version,omitempty"`
	VersionSource string   `json:"version_source,omitempty"`
	Units         []string `json:"units,omitempty"`
}

// Backend is one backend's verdict on the image.
type Backend struct {
	Name string `json:"name"`
	// Runnable is true when nothing rules it out; Confirmed is false when
	// nothing rules it out but not everything could be read.
	Runnable  bool     `json:"runnable"`
	Confirmed bool     `json:"confirmed"`
	Reasons   []string `json:"reasons,omitempty"`
	// Missing is what the image lacks for it, each with what to add.
	Missing []Missing `json:"missing,omitempty"`
}

// Missing is one thing a backend needs that the image lacks.
type Missing struct {
	// Kind is "kernel-module" (the config builds it as a module whose file
	// is not installed), "kernel-config" (the kernel is built without it)
	// or "userspace" (a tool, or a tool's version).
	Kind    string   `json:"kind"`
	What    string   `json:"what"`
	Modules []string `json:"modules,omitempty"`
	// Add says what to add to the image: a package, or another kernel.
	Add string `json:"add"`
}
