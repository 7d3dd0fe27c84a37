package config

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// kind is how a key's value is written and checked.
type kind int

const (
	kindString kind = iota
	kindBool
	kindList
	kindDuration
)

// setting is one key of the operator config. Keys are dotted paths
// ("verify.wait"); the environment variable is derived from the path.
type setting struct {
	path string
	kind kind
	def  any
	// check validates (and may normalise) one scalar or one list item; nil
	// accepts anything.
	check func(string) (string, error)
	// spaces: in the environment the list's items are separated by spaces,
	// not commas, because its values hold commas.
	spaces bool
}

// settings is the whole contract of the config file, in documentation order.
// DESIGN.md lists these names; they must not change.
var settings = []setting{
	{path: "backend", kind: kindString, def: Auto, check: checkBackendChoice},
	{path: "prefer", kind: kindList, def: []string{string(backend.IptablesNFT), string(backend.IptablesLegacy)}, check: checkPreferEntry},
	{path: "legacy_triggers.modules", kind: kindList, def: []string{}, check: checkModuleGlob},
	{path: "legacy_triggers.pci_ids", kind: kindList, def: []string{}, check: checkPCIID},
	{path: "legacy_triggers.dmi", kind: kindList, def: []string{}, check: checkGlob},
	{path: "legacy_triggers.device_tree", kind: kindList, def: []string{}, check: checkGlob, spaces: true},
	{path: "respect_rke2_config", kind: kindBool, def: true},
	{path: "kube_proxy.extra_args", kind: kindList, def: []string{}, check: checkExtraArg, spaces: true},
	{path: "node_label", kind: kindBool, def: true},
	{path: "node_taint", kind: kindString, def: "", check: checkNodeTaint},
	{path: "on_failure", kind: kindString, def: OnFailureWarn, check: checkOnFailure},
	{path: "verify.wait", kind: kindDuration, def: Duration(5 * time.Minute), check: checkWait},
	{path: "verify.textfile_dir", kind: kindString, def: hostfs.TextfileDir, check: checkTextfileDir},
	{path: "verify.node_feature_file", kind: kindBool, def: true},
	{path: "verify.node_condition", kind: kindBool, def: true},
	{path: "cni.helmchartconfig", kind: kindString, def: CNIPrint, check: checkCNIHelmChartConfig},
	{path: "census.interval", kind: kindDuration, def: Duration(0), check: checkCensusInterval},
}

func lookup(p string) (setting, bool) {
	for _, s := range settings {
		if s.path == p {
			return s, true
		}
	}
	return setting{}, false
}

// validKeys lists the keys allowed directly under prefix ("" for the top
// level), in documentation order, for "unknown key" messages.
func validKeys(prefix string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range settings {
		rest, ok := strings.CutPrefix(s.path, prefix)
		if !ok {
			continue
		}
		first, _, _ := strings.Cut(rest, ".")
		if !seen[first] {
			seen[first] = true
			out = append(out, first)
		}
	}
	return out
}

// isSection reports whether p is a mapping of further keys (e.g. "verify").
func isSection(p string) bool {
	for _, s := range settings {
		if strings.HasPrefix(s.path, p+".") {
			return true
		}
	}
	return false
}

// hint explains near-miss backend names. "modern" comes from a widely
// copied blog post and would break kube-proxy outright (DOMAIN.md section 2).
// Switches, not maps, here and in ownedFlag: the generator links this
// package, and a map would be built at every boot's start.
func hint(lower string) string {
	switch lower {
	case "modern":
		return `RKE2's kube-proxy image accepts only IPTABLES_MODE=legacy or nft; "modern" would make every iptables call in kube-proxy fail`
	case "legacy":
		return `"legacy" is the IPTABLES_MODE value; the backend is called iptables-legacy`
	case "nft":
		return `"nft" is the IPTABLES_MODE value; use iptables-nft for iptables over nf_tables, or nftables for kube-proxy's native nftables mode`
	}
	return ""
}

func checkBackendChoice(v string) (string, error) {
	if v == Auto || v == Off {
		return v, nil
	}
	return checkBackend(v, "auto, off, iptables-legacy, iptables-nft or nftables")
}

func checkBackendName(v string) (string, error) {
	return checkBackend(v, "iptables-legacy, iptables-nft or nftables")
}

// checkBackend accepts a backend name, or says which values (allowed) may
// stand there, with a hint for a near miss.
func checkBackend(v, allowed string) (string, error) {
	if _, err := backend.Parse(v); err == nil {
		return v, nil
	}
	msg := fmt.Sprintf("%q is not a backend: use %s", v, allowed)
	if h := hint(strings.ToLower(v)); h != "" {
		msg += " (" + h + ")"
	}
	return "", fmt.Errorf("%s", msg)
}

// PreferCheapest, first in prefer, lets auto pick the backend bench measured
// cheapest here (opt-in: a measurement is only as good as the node's load).
const PreferCheapest = "cheapest"

func checkPreferEntry(v string) (string, error) {
	if v == PreferCheapest {
		return v, nil
	}
	return checkBackendName(v)
}

func checkOnFailure(v string) (string, error) {
	if v == OnFailureWarn || v == OnFailureBlock {
		return v, nil
	}
	return "", fmt.Errorf("%q is not valid: use warn (RKE2 starts anyway) or block (RKE2 does not start)", v)
}

func checkCNIHelmChartConfig(v string) (string, error) {
	if v == CNIPrint || v == CNIWrite {
		return v, nil
	}
	return "", fmt.Errorf("%q is not valid: use print (show the CNI's HelmChartConfig for nftables mode) or write (write it into RKE2's server manifests directory on servers)", v)
}

// checkGlob accepts path.Match patterns; the check runs the pattern once
// because path.Match reports a bad pattern only when it gets that far.
func checkGlob(v string) (string, error) {
	if v == "" {
		return "", fmt.Errorf("an empty pattern matches nothing: remove it")
	}
	if strings.ContainsAny(v, "\n\x00") {
		return "", fmt.Errorf("%q contains a newline or NUL", v)
	}
	if _, err := path.Match(v, v); err != nil {
		return "", fmt.Errorf("%q is not a valid glob (use *, ? and [...] as in shell patterns): %w", v, err)
	}
	return v, nil
}

// checkModuleGlob also normalises "-" to "_", as the kernel does for module names.
func checkModuleGlob(v string) (string, error) {
	if _, err := checkGlob(v); err != nil {
		return "", err
	}
	if strings.Contains(v, "/") {
		return "", fmt.Errorf("%q is a path: give a module or driver name such as \"ahci\" or \"mv_*\"", v)
	}
	return strings.ReplaceAll(v, "-", "_"), nil
}

// pciID and flagName are compiled on first use: most configs set neither
// legacy_triggers.pci_ids nor kube_proxy.extra_args, and the generator
// loads the config at every boot.
var pciID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{4}:[0-9a-fA-F]{4}$`) })

func checkPCIID(v string) (string, error) {
	id := strings.TrimPrefix(strings.ReplaceAll(v, ":0x", ":"), "0x")
	if !pciID().MatchString(id) {
		return "", fmt.Errorf("%q is not a PCI id: use \"vendor:device\" in hex as lspci -n prints it, e.g. \"1b4b:9235\"", v)
	}
	return strings.ToLower(id), nil
}

var flagName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`) })

// ownedFlag says why name is a kube-proxy flag the tool writes itself ("" if
// it is not): a second value from the operator would silently fight the
// decision.
func ownedFlag(name string) (why string) {
	if name == "proxy-mode" {
		return "rke2-proxy-backend sets proxy-mode from the decision; choose the backend with backend: instead"
	}
	return ""
}

func checkExtraArg(v string) (string, error) {
	if !strings.Contains(v, "=") {
		return "", fmt.Errorf("%q is not flag=value: write kube-proxy flags like \"iptables-min-sync-period=1s\" (lower-case name, =, value)", v)
	}
	// The drop-in renderer's own rule, so that what passes here is never
	// refused later by apply (after the generator has already planned it).
	if err := rke2.CheckKubeProxyArg(v); err != nil {
		return "", fmt.Errorf("%q %w", v, err)
	}
	v = strings.TrimPrefix(v, "--")
	name, value, _ := strings.Cut(v, "=")
	if !flagName().MatchString(name) {
		return "", fmt.Errorf("%q is not flag=value: write kube-proxy flags like \"iptables-min-sync-period=1s\" (lower-case name, =, value)", v)
	}
	if why := ownedFlag(name); why != "" {
		return "", fmt.Errorf("%q cannot be set here: %s", v, why)
	}
	// Gate names are case-sensitive in kube-proxy: "nftablesproxymode" is an
	// unknown gate there, which stops kube-proxy just as a removed one does.
	if name == "feature-gates" && strings.Contains(strings.ToLower(value), "nftablesproxymode") {
		return "", fmt.Errorf("%q cannot be set here: rke2-proxy-backend adds NFTablesProxyMode=true itself, only on Kubernetes 1.29-1.30 where the gate exists (passing it to a version that removed it, or in another letter case, stops kube-proxy)", v)
	}
	return v, nil
}

func checkWait(v string) (string, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return "", fmt.Errorf("%q is not a duration: use a number with a unit, e.g. 5m, 90s or 0s (do not wait)", v)
	}
	if d < 0 || d > 24*time.Hour {
		return "", fmt.Errorf("%q is out of range: use 0s to 24h", v)
	}
	return v, nil
}

// CensusIntervalFloor is the shortest census.interval: each round enters
// every pod's network namespace, which is cheap (well under a millisecond
// each) but worth doing only as often as pods come and go.
const CensusIntervalFloor = 10 * time.Minute

// checkCensusInterval accepts 0s (no census in watch) or a duration from
// CensusIntervalFloor to 24h.
func checkCensusInterval(v string) (string, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return "", fmt.Errorf("%q is not a duration: use a number with a unit, e.g. 1h, or 0s (no census)", v)
	}
	if d != 0 && (d < CensusIntervalFloor || d > 24*time.Hour) {
		return "", fmt.Errorf("%q is out of range: use 0s (no census) or %s to 24h", v, CensusIntervalFloor)
	}
	return v, nil
}

// checkTextfileDir accepts "" (no metrics file) or an absolute path.
func checkTextfileDir(v string) (string, error) {
	if v == "" {
		return v, nil
	}
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, "\n\r\x00") {
		return "", fmt.Errorf("%q is not an absolute path: use e.g. %s, or \"\" to write no metrics", v, hostfs.TextfileDir)
	}
	return path.Clean(v), nil
}
