package kpargs

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Severity says what kube-proxy does with a setting.
type Severity string

const (
	// Refuses: kube-proxy exits at start (a flag it cannot parse, a gate
	// it does not know or that is locked to the other value, a mode it
	// does not allow).
	Refuses Severity = "refuses"
	// Ignored: kube-proxy starts and the setting changes nothing.
	Ignored Severity = "ignored"
)

// Finding is one kube-proxy argument the target version refuses or ignores.
type Finding struct {
	Severity Severity `json:"severity"`
	// Kubernetes is the version judged against, e.g. v1.38.0.
	Kubernetes string `json:"kubernetes,omitempty"`
	// File and Line are where the argument is set (Line: the line of the
	// kube-proxy-arg key in File; 0 when unknown).
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Arg is the kube-proxy-arg item as written.
	Arg string `json:"arg"`
	// Remove is what to take out: Arg itself, or one gate pair in it.
	Remove string `json:"remove"`
	Why    string `json:"why"`
}

// Where names the file, line and key, e.g.
// `/etc/rancher/rke2/config.yaml line 3, kube-proxy-arg "feature-gates=X=true"`.
func (f Finding) Where() string {
	where := f.File
	if where == "" {
		where = "the config"
	}
	if f.Line > 0 {
		where += fmt.Sprintf(" line %d", f.Line)
	}
	return fmt.Sprintf("%s, %s %q", where, rke2.KeyKubeProxyArg, f.Arg)
}

// Fix says what to remove.
func (f Finding) Fix() string {
	if f.Remove == f.Arg {
		return fmt.Sprintf("remove that item (%q)", f.Arg)
	}
	return fmt.Sprintf("remove %q from that item and keep its other gates", f.Remove)
}

// String is the operator's sentence for a setting in RKE2's config, which
// this tool never edits.
func (f Finding) String() string {
	what := "kube-proxy"
	if f.Kubernetes != "" {
		what += " " + f.Kubernetes
	}
	if f.Severity == Ignored {
		what += " ignores a setting"
	} else {
		what += " will not start"
	}
	return fmt.Sprintf("%s: %s: %s; %s (rke2-proxy-backend never edits RKE2's config).", what, f.Where(), f.Why, f.Fix())
}

// Check judges kube-proxy-arg items (in the order RKE2 passes them) against
// Kubernetes version v. Version facts need a known 1.x version; a flag
// kube-proxy cannot parse is a finding whatever the version.
func Check(v rke2.KubeVersion, args []rke2.Setting) []Finding {
	minor := -1
	if v.Known() && v.Major == 1 {
		minor = v.Minor
	}
	c := checker{minor: minor, version: v.String(), mode: strings.TrimSpace(lastValue(args, "proxy-mode"))}
	c.ipvsGate, c.ipvsGateSet = lastGate(args, "KubeProxyIPVS")
	var out []Finding
	for i, a := range args {
		out = append(out, c.arg(a, i == lastIndex(args, "proxy-mode"))...)
	}
	return out
}

type checker struct {
	minor   int
	version string
	// mode is the proxy-mode kube-proxy ends up with ("" for none set).
	mode                  string
	ipvsGate, ipvsGateSet bool
}

func (c checker) finding(sev Severity, a rke2.Setting, remove, why string) Finding {
	return Finding{Severity: sev, Kubernetes: c.version, File: a.File, Line: a.Line, Arg: a.Value, Remove: remove, Why: why}
}

func (c checker) arg(a rke2.Setting, lastMode bool) []Finding {
	name, value := flag(a.Value)
	switch {
	case name == "feature-gates":
		gates, err := ParseGates(value)
		if err != nil {
			return []Finding{c.finding(Refuses, a, a.Value, fmt.Sprintf("kube-proxy cannot parse this --feature-gates value (%v) and refuses to start", err))}
		}
		var out []Finding
		for _, g := range gates {
			remove := g.Text
			if len(gates) == 1 {
				remove = a.Value
			}
			if sev, why := c.gate(g); why != "" {
				out = append(out, c.finding(sev, a, remove, why))
			}
		}
		return out
	case name == "proxy-mode" && lastMode && strings.TrimSpace(value) == "ipvs":
		if why := c.ipvsRefused(); why != "" {
			return []Finding{c.finding(Refuses, a, a.Value, why+"; choose iptables or nftables (rke2-proxy-backend's backend:)")}
		}
	case strings.HasPrefix(name, "ipvs-"):
		off, offOK := firstFact(kindIPVSOff, "KubeProxyIPVS")
		if offOK && c.minor >= off.Minor && (c.mode != "ipvs" || c.ipvsRefused() != "") {
			return []Finding{c.finding(Ignored, a, a.Value, fmt.Sprintf("--%s applies only to ipvs mode, which kube-proxy runs from 1.%d only with feature-gates=KubeProxyIPVS=true (%s)", name, off.Minor, off.Source))}
		}
	}
	return nil
}

// gate judges one gate pair; why is "" when kube-proxy takes it as meant.
func (c checker) gate(g Gate) (Severity, string) {
	if c.minor < 0 {
		return "", ""
	}
	if f, ok := factFor(kindRemoved, g.Name, c.minor); ok {
		return Refuses, fmt.Sprintf("Kubernetes 1.%d removed the feature gate %s (%s), and kube-proxy refuses a gate it does not know", f.Minor, g.Name, f.Source)
	}
	if f, ok := firstFact(kindAdded, g.Name); ok && c.minor < f.Minor {
		return Refuses, fmt.Sprintf("the feature gate %s first exists in Kubernetes 1.%d (%s), and kube-proxy 1.%d refuses a gate it does not know", g.Name, f.Minor, f.Source, c.minor)
	}
	f, ok := factFor(kindLocked, g.Name, c.minor)
	if !ok {
		return "", ""
	}
	if g.Value != f.Value {
		return Refuses, fmt.Sprintf("the feature gate %s is locked to %t since Kubernetes 1.%d (%s), and kube-proxy refuses to set it to %t", g.Name, f.Value, f.Minor, f.Source, g.Value)
	}
	why := fmt.Sprintf("the feature gate %s is locked to %t since Kubernetes 1.%d (%s), so setting it changes nothing (kube-proxy only logs a warning)", g.Name, f.Value, f.Minor, f.Source)
	if r, ok := firstFact(kindRemoved, g.Name); ok {
		why += fmt.Sprintf("; Kubernetes 1.%d removes it, and then this setting stops kube-proxy", r.Minor)
	}
	return Ignored, why
}

// ipvsRefused says why kube-proxy refuses proxy-mode=ipvs, or "".
func (c checker) ipvsRefused() string {
	if c.minor < 0 {
		return ""
	}
	if f, ok := factFor(kindIPVSGone, "KubeProxyIPVS", c.minor); ok {
		return fmt.Sprintf("kube-proxy has no ipvs mode from Kubernetes 1.%d on (%s)", f.Minor, f.Source)
	}
	if c.ipvsGateSet {
		if c.ipvsGate {
			return ""
		}
		if _, known := factFor(kindAdded, "KubeProxyIPVS", c.minor); known {
			return "feature-gates sets KubeProxyIPVS=false, and kube-proxy refuses proxy-mode=ipvs while that gate is off (pkg/proxy/apis/config/validation, v1.37.2)"
		}
		return ""
	}
	if f, ok := factFor(kindIPVSOff, "KubeProxyIPVS", c.minor); ok {
		return fmt.Sprintf("from Kubernetes 1.%d the feature gate KubeProxyIPVS is off by default (%s), and kube-proxy refuses proxy-mode=ipvs while it is off", f.Minor, f.Source)
	}
	return ""
}

// flag splits a kube-proxy-arg item as RKE2 passes it: "--" optional.
// The value is kept as it is: kube-proxy parses it, spaces included.
func flag(item string) (name, value string) {
	name, value, _ = strings.Cut(strings.TrimPrefix(strings.TrimSpace(item), "--"), "=")
	return name, value
}

// lastIndex is the index of the last item setting name (-1 for none):
// kube-proxy keeps the last of a repeated flag.
func lastIndex(args []rke2.Setting, name string) int {
	for i := len(args) - 1; i >= 0; i-- {
		if n, _ := flag(args[i].Value); n == name {
			return i
		}
	}
	return -1
}

func lastValue(args []rke2.Setting, name string) string {
	if i := lastIndex(args, name); i >= 0 {
		_, v := flag(args[i].Value)
		return v
	}
	return ""
}

// lastGate is gate's last value across every --feature-gates item (each
// one adds to kube-proxy's map, later pairs winning); unparsable items
// count for nothing (they are their own finding).
func lastGate(args []rke2.Setting, gate string) (value, set bool) {
	for _, a := range args {
		name, v := flag(a.Value)
		if name != "feature-gates" {
			continue
		}
		gates, err := ParseGates(v)
		if err != nil {
			continue
		}
		for _, g := range gates {
			if g.Name == gate {
				value, set = g.Value, true
			}
		}
	}
	return value, set
}

// Refusing returns the findings that stop kube-proxy.
func Refusing(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity == Refuses {
			out = append(out, f)
		}
	}
	return out
}
