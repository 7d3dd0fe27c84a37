// Package facts is the read-only probe of an RKE2 node: kernel, modules,
// hardware, userspace, live kube rules and the RKE2 install. It never runs
// the tools the facts are about and never writes. A source that is missing
// or unreadable is a fact too ("unknown", with a note in Problems), never a
// crash: the generator must decide something on every boot.
package facts

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
)

// Tristate is a kernel config option's value.
type Tristate string

const (
	Builtin Tristate = "y"
	Module  Tristate = "m"
	Absent  Tristate = "n"       // config was read and the option is not set
	Unknown Tristate = "unknown" // no kernel config could be read
)

// Facts is everything the decision may depend on.
type Facts struct {
	Kernel    Kernel    `json:"kernel"`
	Modules   Modules   `json:"modules"`
	Hardware  Hardware  `json:"hardware"`
	Userspace Userspace `json:"userspace"`
	LiveRules LiveRules `json:"live_rules"`
	RKE2      RKE2      `json:"rke2"`
	// Cmdline is the kernel command line systemd honours (/proc/cmdline, or
	// /proc/1/cmdline inside a container), split into words.
	Cmdline []string `json:"cmdline"`
	// HostServices are the host's firewall and network managers' settings.
	HostServices HostServices `json:"host_services"`
	// PreviousPlan is the backend recorded in /run/rke2-proxy-backend/plan.json
	// by this boot's earlier apply ("" when none): on daemon-reload the node
	// is running and must not flip.
	PreviousPlan string `json:"previous_plan,omitempty"`
	// TrialFailed maps the backends whose trial load apply ran and the
	// kernel rejected to what failed. Only apply fills it (the probe never
	// loads rules); decide treats those backends as ones the host cannot run.
	TrialFailed map[string]string `json:"trial_failed,omitempty"`
	// Cost is bench's last measurement (nil when none was recorded).
	Cost *Cost `json:"cost,omitempty"`
	// Problems lists sources that are missing (facts become "unknown"), in
	// plain sentences; they are normal on many hosts.
	Problems []string `json:"problems,omitempty"`
	// Image is set when the root runs no kernel (no
	// /proc/sys/kernel/osrelease under it) but has one installed: a node
	// image, judged by the kernel installed in it. NotInImage then says what an image cannot
	// tell (loaded modules, live rules, the machine's hardware), which are
	// no problems of the image.
	Image      bool     `json:"image,omitempty"`
	NotInImage []string `json:"not_in_image,omitempty"`
	// Unreadable lists sources that exist but could not be read or parsed
	// (a corrupt /proc/config.gz, bad YAML in RKE2's config), each naming the
	// file and what to do. detect exits 2 on them; the generator logs them
	// and decides on what it could read.
	Unreadable []string `json:"unreadable,omitempty"`
}

// Kernel describes the running kernel.
type Kernel struct {
	Release string `json:"release"` // "" when unknown
	// ReleaseSource says where Release came from when not from the running
	// kernel's /proc/sys/kernel/osrelease: --kernel-release, or an image's
	// installed kernel.
	ReleaseSource string `json:"release_source,omitempty"`
	Major         int    `json:"major"`
	Minor         int    `json:"minor"`
	Patch         int    `json:"patch"`
	// ConfigSource is the file the config was read from ("" when none).
	ConfigSource string `json:"config_source,omitempty"`
	// Config holds the netfilter options we care about (names without
	// CONFIG_), each y, m, n or unknown.
	Config map[string]Tristate `json:"config"`
}

// Modules describes kernel modules. A nil list with Known false means the
// source was missing (e.g. /proc/modules on a kernel without module support).
type Modules struct {
	Loaded         []string `json:"loaded"`
	LoadedKnown    bool     `json:"loaded_known"`
	Builtin        []string `json:"builtin"`
	BuiltinKnown   bool     `json:"builtin_known"`
	Available      []string `json:"available"`
	AvailableKnown bool     `json:"available_known"`
}

// PCIDevice is one device under /sys/bus/pci/devices.
type PCIDevice struct {
	Address string `json:"address"` // 0000:00:1f.2
	Vendor  string `json:"vendor"`  // 4 hex digits, lower case, no 0x
	Device  string `json:"device"`
	Driver  string `json:"driver,omitempty"`
}

// Hardware is the inventory legacy triggers match against.
type Hardware struct {
	PCI        []PCIDevice `json:"pci"`
	DMIVendor  string      `json:"dmi_vendor,omitempty"`
	DMIProduct string      `json:"dmi_product,omitempty"`
	// DeviceTreeModel and DeviceTreeCompatible name a machine that boots
	// from a device tree (/proc/device-tree/model and compatible's list,
	// most specific first); empty on DMI machines.
	DeviceTreeModel      string   `json:"device_tree_model,omitempty"`
	DeviceTreeCompatible []string `json:"device_tree_compatible,omitempty"`
	// Drivers are names bound under /sys/bus/*/drivers (sorted, unique).
	Drivers []string `json:"drivers"`
}

// Userspace is what the host's own iptables looks like.
type Userspace struct {
	// IptablesAlternative is "legacy", "nft" or "unknown": where the host's
	// iptables command points (kubelet writes its hint chains with it).
	IptablesAlternative string `json:"iptables_alternative"`
	IptablesPath        string `json:"iptables_path,omitempty"`
	// LegacyTables are the tables in /proc/net/ip_tables_names and
	// ip6_tables_names; present ones may be empty probe leftovers.
	LegacyTablesIPv4 []string `json:"legacy_tables_ipv4"`
	LegacyTablesIPv6 []string `json:"legacy_tables_ipv6"`
	// Nft and Iptables are the host tools' versions (empty when unknown:
	// the generator reads neither; detect reads dpkg's status file, apply
	// also asks nft itself).
	Nft      ToolVersion `json:"nft,omitempty"`
	Iptables ToolVersion `json:"iptables,omitempty"`
}

// LiveRules records where kube-proxy's rules live right now. Only probed on
// the real host root; Probed is false otherwise or when probing failed.
type LiveRules struct {
	Probed bool `json:"probed"`
	// KubeProxy lists the backends holding kube-proxy-owned chains or tables
	// (KUBE-SERVICES & co., or table ip/ip6 kube-proxy).
	KubeProxy []string `json:"kube_proxy"`
	// KubeletHint lists the backends holding kubelet's KUBE-IPTABLES-HINT or
	// KUBE-KUBELET-CANARY.
	KubeletHint []string `json:"kubelet_hint"`
	// NFTablesNotLoaded says nf_tables was neither loaded nor built in, so
	// no nftables rule could exist and the kernel was not asked (asking
	// loads it): netfilter.NFTablesAbsent's words.
	NFTablesNotLoaded string `json:"nftables_not_loaded,omitempty"`
	// UserdataSets are the sets with user data in tables kube-proxy does
	// not own (UserdataSetsRead: the kernel was asked), for skew.
	UserdataSets     []skew.UserdataSet `json:"userdata_sets,omitempty"`
	UserdataSetsRead bool               `json:"userdata_sets_read,omitempty"`
	// IPVS is kube-proxy's ipvs-mode state on the node ("ipset KUBE-CLUSTER-IP",
	// "link kube-ipvs0", "virtual server 10.43.0.1:443/TCP"): an ipvs node's
	// footprint, or leftovers on any other node.
	IPVS []string `json:"ipvs,omitempty"`
}

// RKE2Unit is one installed rke2-server / rke2-agent unit file.
type RKE2Unit struct {
	Name string `json:"name"` // rke2-server.service
	Path string `json:"path"` // host path of the unit file
	Role string `json:"role"` // server | agent
	// Binary is ExecStart's program, e.g. /usr/local/bin/rke2.
	Binary string `json:"binary,omitempty"`
	// ConfigFile is RKE2_CONFIG_FILE from the unit's environment files, if set.
	ConfigFile string `json:"config_file,omitempty"`
	// IptablesMode is, on k3s, the operator's IPTABLES_MODE in the unit's
	// environment (unit file, drop-ins, environment files; never our own
	// drop-in): kube-proxy runs inside k3s, so this is kube-proxy's, the
	// same explicit choice as RKE2's kube-proxy-extra-env.
	IptablesMode *UnitEnvSetting `json:"iptables_mode,omitempty"`
	// execStart is, on k3s, the last ExecStart= (flags there win over
	// k3s's config).
	execStart string
}

// RKE2 describes the RKE2 install and its effective configuration.
type RKE2 struct {
	Units []RKE2Unit `json:"units"`
	// Version is e.g. "v1.31.2+rke2r1" ("" when unknown) and VersionSource
	// says where it came from.
	Version       string `json:"version,omitempty"`
	VersionSource string `json:"version_source,omitempty"`
	// Kubernetes is the Kubernetes minor derived from Version (zero when unknown).
	Kubernetes rke2.KubeVersion `json:"kubernetes"`
	// ConfigFile is the main config path RKE2 will read.
	ConfigFile string `json:"config_file"`
	// Config is the effective RKE2 config (main file and drop-ins merged).
	Config rke2.Effective `json:"config"`
	// DataDir is RKE2's data-dir (its config's data-dir, else the default).
	DataDir string `json:"data_dir,omitempty"`
	// CNI is what RKE2 runs for pod networking and how its charts are set.
	CNI cni.Setup `json:"cni"`
	// Distribution is set on k3s only ("" is RKE2, as before it was known),
	// so the decision words its reasons for the node's distribution.
	Distribution distro.Kind `json:"distribution,omitempty"`
	// K3sAuxTarget is, on k3s, where bin/aux's iptables link points:
	// iptables-detect.sh, or the xtables-<mode>-multi an earlier start
	// stuck it to ("" before k3s's first start).
	K3sAuxTarget string `json:"k3s_aux_target,omitempty"`
	// K3sNft is, on k3s, where an nft is on k3s's PATH (kube-proxy's
	// nftables mode runs it); nil on RKE2, whose nft is the image's.
	K3sNft *K3sNft `json:"k3s_nft,omitempty"`
	// K3sNetwork is, on k3s, whether its flannel and kube-router's network
	// policy run (they share kube-proxy's backend there).
	K3sNetwork *K3sNetwork `json:"k3s_network,omitempty"`
}
