package verify

import (
	"context"
	"errors"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/ipvs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// verify's exported types, in one place: what a run is given (Options,
// Claim; Host, what ForHost builds it from), what it finds (Finding) and
// what it reports (Result, BackendState, the verdicts).

// Options are one verify run's inputs.
type Options struct {
	Expect backend.Backend
	// ExpectSource says where Expect came from ("plan" or "flag").
	ExpectSource string
	// OneBootOverride is set when the plan's backend comes from the kernel
	// command line: kubelet's hint chains then stay where the host's
	// iptables alternative puts them, and their place is a warning.
	OneBootOverride bool
	// Kubernetes selects the layout; zero means unknown (then both nftables
	// layouts are accepted).
	Kubernetes rke2.KubeVersion
	// Families kube-proxy programs on this node (empty: both); a node
	// without usable IPv6 runs kube-proxy single-stack (see facts.IPFamilies).
	Families []rules.Family
	// SingleStackReason says why IPv6 is not among Families, for the note.
	SingleStackReason string
	// HostIptables is where the host's iptables alternative points
	// ("legacy", "nft", "" unknown): kubelet writes its hint chains with
	// it, so it tells a misplaced hint from a leftover one.
	HostIptables string
	Reader       netfilter.Reader
	// ProxyMode is the plan's kube-proxy mode ("" when no plan says):
	// ProxyModeIPVS judges ipvs mode's footprint in Expect (its chains,
	// ipsets, kube-ipvs0, virtual servers), anything else Expect's own mode.
	ProxyMode string
	// IPVS reads ipvs mode's state that is no rule (ipsets, kube-ipvs0,
	// virtual servers, net.ipv4.vs.conntrack) in the caller's network
	// namespace; nil leaves it unread, with a note (a fixture root has no
	// kernel state of its own). Only ipvs mode calls it.
	IPVS func() ipvs.Footprint
	// Wait bounds the wait for kube-proxy's first sync; Poll is how often
	// the backend's change stamp is looked at meanwhile.
	Wait, Poll time.Duration
	// Progress, when set, gets a line saying what is still missing at most
	// every ProgressEvery while verify waits.
	Progress      func(line string)
	ProgressEvery time.Duration
	// ProxyModeURL is kube-proxy's /proxyMode endpoint ("" skips the check;
	// kubeproxy.ProxyModeEndpoint finds it in RKE2's config). ProxyModeSource says
	// where it came from, for the notes; with no URL it says why.
	ProxyModeURL, ProxyModeSource string
	// CNI is what RKE2 runs for pod networking (nil: not read); it picks
	// the chart a CNI finding's fix names.
	CNI *cni.Setup
	// Distribution is the node's ("" counts as RKE2).
	// verify carries the Kind rather than only its ownership.Group: the
	// group says whose chains move with kube-proxy's, but the Kind also
	// picks the facts (k3s's config instead of RKE2's HelmChartConfigs)
	// and the fix texts (k3s's bin/aux links and unit, not RKE2's charts).
	Distribution distro.Kind
	// K3s is what k3s runs beside kube-proxy, on k3s (nil: not read; then
	// flannel and kube-router's network policy count as running, k3s's
	// default). A writer k3s does not run is judged as an operator's CNI.
	K3s *facts.K3sNetwork
	// Units are the distribution's installed units, for the restart the
	// k3s fixes name (none: k3s's usual names).
	Units []string
	// NFTTables lists the native nftables tables (netfilter.NFTTables), to
	// find the CNIs' own tables next to kube-proxy's; nil looks for none.
	NFTTables func(ctx context.Context) ([]rules.Table, error)
	// Sleep is time.Sleep-like and honours ctx; Now is time.Now. Tests
	// replace both with a fake clock that Sleep advances, so a wait is
	// judged by the clock verify reads, not by how busy the machine is.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

// Claim is what the operator says instead of the plan: a backend and a
// Kubernetes version, as given on the command line ("" to use the plan's).
type Claim struct {
	Backend, Kubernetes string
}

// Host is a host to verify and what the operator said about it. Zero
// fields mean "as the host says": the plan's backend and Kubernetes, the
// endpoint RKE2's config gives kube-proxy, verify's own shallow reader.
type Host struct {
	Root  hostfs.Root
	Claim Claim
	// ProxyMode, when set, is asked instead of the endpoint RKE2's
	// kube-proxy-arg metrics-bind-address puts kube-proxy on; its URL ""
	// skips the /proxyMode check.
	ProxyMode *kubeproxy.Endpoint
	// Reader reads the rules (nil: NewReader(Root)); watch passes the one
	// its change stamps read too.
	Reader netfilter.Reader
	// Warn, when set, gets each host file the CNI could not be read from:
	// a CNI verify cannot name only makes a finding's fix less precise.
	Warn func(string)
	// Distribution overrides the one distro.Find sees under Root
	// (--distribution; "" finds it).
	Distribution distro.Kind
}

// FlagError is a claim that does not parse: a usage error, not a finding.
type FlagError struct {
	Flag string // "--expect", "--kubernetes"
	Err  error
}

func (e *FlagError) Error() string { return e.Flag + ": " + e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// ErrOff is a host whose plan turned rke2-proxy-backend off (backend:
// off): there is nothing to verify, which is no failure.
var ErrOff = errors.New("rke2-proxy-backend is turned off (backend: off)")

// ProxyModeIPVS is Options.ProxyMode on a node whose plan keeps kube-proxy
// in ipvs mode: Expect is then the iptables backend under it.
const ProxyModeIPVS = "ipvs"

// Finding is one thing that does not hold, with the command that fixes it.
type Finding struct {
	Kind    string          `json:"kind"`
	Backend backend.Backend `json:"backend"`
	Family  rules.Family    `json:"family,omitempty"`
	Table   string          `json:"table,omitempty"`
	Message string          `json:"message"`
	Fix     string          `json:"fix"`
}

// Verdicts, and the exit codes the command maps them to.
const (
	VerdictOK = "ok" // exit 0
	// VerdictFailed: something verify can name is wrong (exit 1).
	VerdictFailed = "failed"
	// VerdictUnknown: verify cannot tell, because nothing says which
	// backend to expect or the expected backend cannot be read (exit 3).
	VerdictUnknown = "unknown"
)

// BackendState is what verify found in one backend.
type BackendState struct {
	Backend  backend.Backend `json:"backend"`
	Expected bool            `json:"expected"`
	// Complete is set for the expected backend: the whole skeleton is there.
	Complete bool `json:"complete,omitempty"`
	// KubeProxyChains and KubeProxyRules count kube-proxy's objects
	// (stranded ones when the backend is not the expected one; on k3s
	// those of the whole group, flannel's and kube-router's too).
	KubeProxyChains int      `json:"kube_proxy_chains"`
	KubeProxyRules  int      `json:"kube_proxy_rules"`
	KubeletHints    []string `json:"kubelet_hints,omitempty"`
	// CNIChains counts the chains holding each CNI component's rules.
	CNIChains map[cni.Owner]int `json:"cni_chains,omitempty"`
	// CNIOtherBackend counts those that belong in another backend.
	CNIOtherBackend map[cni.Owner]int `json:"cni_other_backend,omitempty"`
	cniChains       map[cni.Owner][]string
	// strays names, on k3s, whose objects the stranded counts hold
	// ("k3s's kube-proxy, flannel"), for the report's line.
	strays    string
	ReadError string `json:"read_error,omitempty"`
	// Owned is the detail behind the counts; Live is what was read.
	Owned *ownership.Owned `json:"-"`
	Live  *rules.Ruleset   `json:"-"`
}

// Result is the outcome, as printed with -o json and stored in status.json.
type Result struct {
	Schema int  `json:"schema"` // StatusSchema, set by JSON
	OK     bool `json:"ok"`
	// Verdict is VerdictOK, VerdictFailed, VerdictUnknown or (read back
	// from status.json) VerdictInvalid.
	Verdict string `json:"verdict"`
	// Invalid says why a run could not store its result; never set by Run.
	Invalid      string          `json:"invalid,omitempty"`
	Expect       backend.Backend `json:"expect"`
	ExpectSource string          `json:"expect_source"`
	Kubernetes   string          `json:"kubernetes,omitempty"`
	// Mode is the proxy mode Expect was judged in (ipvs, iptables, nftables).
	Mode string `json:"mode,omitempty"`
	// Synced is true when the expected skeleton appeared within the wait.
	Synced    bool   `json:"synced"`
	ProxyMode string `json:"proxy_mode,omitempty"`
	// KubeProxy is kube-proxy's own sync figures, when its /metrics had them.
	KubeProxy *kubeproxy.Figures `json:"kube_proxy,omitempty"`
	Backends  []BackendState     `json:"backends"`
	Findings  []Finding          `json:"findings"`
	// Warnings are findings that do not fail verify (see OneBootOverride).
	Warnings []Finding `json:"warnings,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
	// Writer (set by watch only) committed to nf_tables before the run that
	// first found the rules wrong; WriterUnknown says why none is known.
	Writer        *events.Writer `json:"writer,omitempty"`
	WriterUnknown string         `json:"writer_unknown,omitempty"`
	// Duration is left out of status.json, byte-stable on an unchanged node.
	Duration time.Duration `json:"-"`
	// distribution and units are Run's, for the words of the fixes
	// AddSyncFailures adds later.
	distribution distro.Kind
	units        []string
}
