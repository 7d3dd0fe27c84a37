package hostfs

import "time"

// Every host path and helper binary the program uses, in one place (like
// coreos/ignition's internal/distro). Each is a path on the host as seen
// from "/": callers read and write them through a Root, so --root and
// RKE2_PROXY_BACKEND_ROOT move all of them at once for tests.
//
// Vars are the ones a distribution may have to move; a package build sets
// them at link time, e.g.
//
//	go build -ldflags '-X github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs.Binary=/opt/bin/rke2-proxy-backend'
//
// -X only sets a string var initialised with a literal, so keep each one
// that way, and use these names directly rather than copying them into other
// packages' vars: one name per path keeps grep honest. Consts are paths the
// kernel, systemd or RKE2 define: moving them would be a bug, not a port.

// Where our own packages install things (packaging/nfpm.yaml must agree).
var (
	// Binary is the packages' installed tool. The generated drop-ins run
	// it by an absolute path: ExecStartPre= must not depend on PATH, and
	// systemd runs the drop-ins before any profile could set one. The
	// generator writes its own resolved executable instead when that is
	// the installed tool (a tarball under /usr/local); the tarball's
	// install.sh rewrites the shipped units' ExecStart= the same way.
	Binary = "/usr/bin/rke2-proxy-backend"
	// ShippedUnitDir holds our shipped units: the distribution's unit directory
	// (/usr/lib on merged-/usr and RPM hosts), not /etc, which is the
	// administrator's.
	ShippedUnitDir = "/usr/lib/systemd/system"
	// ConfigFile is the operator's config: /etc, because the operator owns it
	// and no package upgrade changes it (packages create it only when absent).
	ConfigFile = "/etc/rke2-proxy-backend/config.yaml"
	// TextfileDir is the default verify.textfile_dir: the directory Debian's
	// prometheus-node-exporter package reads textfile metrics from.
	TextfileDir = "/var/lib/prometheus/node-exporter"
)

// Our runtime state. /run is a tmpfs emptied at boot, which is the point:
// the plan and the status describe this boot only, and a stale plan from a
// previous boot must never pin a backend.
const (
	// RunDir holds our per-boot state.
	RunDir = "/run/rke2-proxy-backend"
	// PlanFile is the decision apply recorded this boot; verify, cleanup
	// and the next daemon-reload's generator read it.
	PlanFile = RunDir + "/plan.json"
	// StatusFile is verify's last result, for operators and tools.
	StatusFile = RunDir + "/status.json"
	// VerifyPending marks a verify run that has not stored its result yet
	// (Root.BeginPending): check says "unknown" when it outlived its run.
	VerifyPending = RunDir + "/verify.pending"
	// WatchHeartbeat is an empty file whose mtime the watch service
	// refreshes while it runs; check judges status.json's age by it.
	WatchHeartbeat = RunDir + "/watch.heartbeat"
)

// WatchHeartbeatEvery is how often a running watch refreshes
// WatchHeartbeat: the heartbeat's contract, beside its path, for the
// writer (watch) and the readers (check, the Node condition's publisher).
const WatchHeartbeatEvery = 30 * time.Second

// BenchFile is `bench`'s last result: what each backend's rule loads cost
// on this node. Under /var/lib, not /run: it must outlive reboots (a bench
// takes minutes at scale), and it is measured again when the kernel or the
// loaders change.
const BenchFile = "/var/lib/rke2-proxy-backend/bench.json"

// NFDFeaturesDir is node-feature-discovery's local feature directory, the
// hostPath nfd-worker mounts by default: it reads every file there and
// turns its lines into node labels. NFDFeatureFile is ours in it, by name:
// an operator's own files sit beside it.
const (
	NFDFeaturesDir = "/etc/kubernetes/node-feature-discovery/features.d"
	NFDFeatureFile = NFDFeaturesDir + "/rke2-proxy-backend"
)

// SwitchJournal is an unfinished `switch`'s record: the operator config's
// original bytes, the target and the step reached. Under /var/lib, not
// /run: a switch cut by a power loss must be finished after the reboot.
const SwitchJournal = "/var/lib/rke2-proxy-backend/switch.json"

// UnitDropInName is the file name (not a path: systemd hands the generator
// its directory) of every drop-in the generator writes into <unit>.d. A
// file of that name in /etc/systemd/system/<unit>.d/ replaces ours, which
// is how an administrator overrides or masks it; the probe leaves ours out.
const UnitDropInName = "50-rke2-proxy-backend.conf"

// Helper binaries.
var (
	// Modprobe is a host path resolved under the root, so a fixture root
	// brings its own fake. /sbin works on merged-/usr hosts too (/sbin is
	// a link to usr/sbin there) and on the few that are not merged.
	Modprobe = "/sbin/modprobe"

	// The iptables dump and load tools are looked up in PATH, like
	// kube-proxy's own iptables wrapper does, because distributions put
	// them in /sbin, /usr/sbin or both. The -legacy/-nft names are used,
	// never plain iptables-save: that is whichever flavour the host's
	// alternatives point at, and we must read a specific backend.
	IptablesLegacySave     = "iptables-legacy-save"
	Ip6tablesLegacySave    = "ip6tables-legacy-save"
	IptablesLegacyRestore  = "iptables-legacy-restore"
	Ip6tablesLegacyRestore = "ip6tables-legacy-restore"
	IptablesNFTSave        = "iptables-nft-save"
	Ip6tablesNFTSave       = "ip6tables-nft-save"
	IptablesNFTRestore     = "iptables-nft-restore"
	Ip6tablesNFTRestore    = "ip6tables-nft-restore"
	// NFT is nftables' command-line tool, looked up in PATH.
	NFT = "nft"
	// Systemctl restarts RKE2 for `switch`, looked up in PATH (/bin or
	// /usr/bin depending on the distribution's /usr merge).
	Systemctl = "systemctl"
)

// IptablesCommands are where distributions put the iptables command, in
// the order a root shell's PATH finds them (usrmerged hosts have both);
// /etc/alternatives/iptables catches Debian hosts whose /usr/sbin entry is
// missing but whose alternative is set.
var IptablesCommands = []string{"/usr/sbin/iptables", "/sbin/iptables", "/etc/alternatives/iptables"}

// RKE2's paths, as RKE2 itself defines them (rancher/rke2 defaults).
const (
	// RKE2ConfigFile is RKE2's main config when RKE2_CONFIG_FILE is unset.
	RKE2ConfigFile = "/etc/rancher/rke2/config.yaml"
	// RKE2DataDir is RKE2's data-dir unless its config moves it.
	RKE2DataDir = "/var/lib/rancher/rke2"
)

// k3s's paths, as k3s and its install.sh define them (k3s-io/k3s defaults
// for a root install).
const (
	// K3sConfigFile is k3s's main config; drop-ins are in K3sConfigFile+".d".
	K3sConfigFile = "/etc/rancher/k3s/config.yaml"
	// K3sDataDir is k3s's data-dir unless its config moves it.
	K3sDataDir = "/var/lib/rancher/k3s"
	// K3sAuxDir is, under the data dir, where k3s-root's iptables wrappers
	// live: the last PATH entry k3s sets, whose iptables links
	// xtables-set-mode.sh rewrites on the first run.
	K3sAuxDir = "data/current/bin/aux"
)

// K3sUnitDirs are where k3s's units land: install.sh writes
// /etc/systemd/system, distribution packages /usr/lib/systemd/system.
var K3sUnitDirs = []string{"/etc/systemd/system", "/usr/lib/systemd/system"}

// UnitSearchDirs are where RKE2's units land, in systemd's precedence order:
// /etc/systemd/system (install.sh with a /opt/rke2 prefix), then
// /usr/local/lib/systemd/system (tarball), then /usr/lib and /lib (RPM).
var UnitSearchDirs = []string{
	"/etc/systemd/system",
	"/usr/local/lib/systemd/system",
	"/usr/lib/systemd/system",
	"/lib/systemd/system",
}

// RKE2EnvFiles are RKE2's units' EnvironmentFile= lines, used when a unit
// has none of its own (%N is the unit name without ".service").
var RKE2EnvFiles = []string{"/etc/default/%N", "/etc/sysconfig/%N", "/usr/local/lib/systemd/system/%N.env"}

// systemd's own markers.
const (
	// InitrdRelease marks an initrd when SYSTEMD_IN_INITRD is not set
	// (systemd before 251 does not set it).
	InitrdRelease = "/etc/initrd-release"
	// SystemdContainer is written by systemd-nspawn and other container
	// managers; systemd reads it to know it runs in a container.
	SystemdContainer = "/run/systemd/container"
)

// Kernel interfaces: fixed by the kernel ABI.
const (
	// Kmsg is the kernel log device. Generators run before journald, and
	// systemd.generator(7) asks them to log there.
	Kmsg = "/dev/kmsg"
	// ProcCmdline is the kernel command line.
	ProcCmdline = "/proc/cmdline"
	// Proc1Cmdline and Proc1Environ are PID 1's arguments and environment:
	// inside a container systemd takes its "kernel" command line from its
	// own arguments and learns it is in a container from container=.
	Proc1Cmdline = "/proc/1/cmdline"
	Proc1Environ = "/proc/1/environ"
	// KernelOSRelease is the running kernel's release (uname -r).
	KernelOSRelease = "/proc/sys/kernel/osrelease"
	// ProcModules lists loaded modules; it is absent on kernels built
	// without module support.
	ProcModules = "/proc/modules"
	// ModulesDir holds each kernel release's modules, modules.dep and
	// modules.builtin. /lib, not /usr/lib: kmod looks there, and merged-/usr
	// hosts link it.
	ModulesDir = "/lib/modules"
	// ProcConfigGz is the running kernel's config when built with IKCONFIG_PROC.
	ProcConfigGz = "/proc/config.gz"
	// IPTablesNames and IP6TablesNames list the legacy x_tables tables in
	// use in this network namespace; reading them creates nothing.
	IPTablesNames  = "/proc/net/ip_tables_names"
	IP6TablesNames = "/proc/net/ip6_tables_names"
	// IfInet6 and IPv6DisableAll are what kube-proxy reads to decide whether
	// it runs dual-stack: no if_inet6 (ipv6.disable=1) or disable_ipv6=1 in
	// this network namespace means it programs IPv4 only.
	IfInet6        = "/proc/net/if_inet6"
	IPv6DisableAll = "/proc/sys/net/ipv6/conf/all/disable_ipv6"
	// IPVSConntrack is net.ipv4.vs.conntrack, which kube-proxy's ipvs mode
	// sets to 1; like all of /proc/sys/net it follows the reader's network
	// namespace, and it is absent without IPVS in the kernel.
	IPVSConntrack = "/proc/sys/net/ipv4/vs/conntrack"
	// PCIDevicesDir, DMIDir and SysBusDir describe the hardware (NICs whose
	// drivers need particular modules, the machine's vendor).
	PCIDevicesDir = "/sys/bus/pci/devices"
	DMIDir        = "/sys/class/dmi/id"
	SysBusDir     = "/sys/bus"
	// DeviceTreeModel and DeviceTreeCompatible name the machine on hosts
	// that boot from a device tree (arm64 NAS boxes) instead of DMI: a
	// NUL-terminated string and a NUL-separated list, most specific first.
	DeviceTreeModel      = "/proc/device-tree/model"
	DeviceTreeCompatible = "/proc/device-tree/compatible"
)

// KernelImageFiles are where a kernel release's image is installed:
// /boot (Debian, Ubuntu, EL) or beside its modules (Fedora, ostree).
func KernelImageFiles(release string) []string {
	return []string{"/boot/vmlinuz-" + release, ModulesDir + "/" + release + "/vmlinuz"}
}

// KernelConfigFiles are the places kubeadm's preflight
// (k8s.io/system-validators, kernel_validator.go loadKConfigs) looks for the
// running kernel's config, in its order, plus /lib/modules/$r/config next to
// its /usr twin for hosts without a merged /usr. With release "" (unknown
// or unusable in a path) only the release-independent places are left.
func KernelConfigFiles(release string) []string {
	if release == "" {
		return []string{ProcConfigGz, "/usr/src/linux/.config"}
	}
	return []string{
		ProcConfigGz,
		"/boot/config-" + release,
		"/usr/src/linux-" + release + "/.config",
		"/usr/src/linux/.config",
		"/usr/lib/modules/" + release + "/config",
		ModulesDir + "/" + release + "/config",
		"/usr/lib/ostree-boot/config-" + release,
		"/usr/lib/kernel/config-" + release,
		"/usr/src/linux-headers-" + release + "/.config",
		ModulesDir + "/" + release + "/build/.config",
	}
}
