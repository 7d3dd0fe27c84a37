package switchover

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kpargs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Translation is one ipvs-only setting in RKE2's config (or in the tool's
// kube_proxy.extra_args) and what it becomes once kube-proxy leaves ipvs.
type Translation struct {
	Arg  string `json:"arg"`
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Stripped is set for an ipvs-* item of the tool's own extra_args,
	// which the drop-in leaves out outside ipvs mode; the operator's items
	// are only named (never edited).
	Stripped bool   `json:"stripped,omitempty"`
	Becomes  string `json:"becomes"`
}

// String is the report line: where, what it becomes, what to do.
func (t Translation) String() string {
	do := fmt.Sprintf("remove the item from %s (rke2-proxy-backend never edits RKE2's config)", t.File)
	if t.Stripped {
		do = "the drop-in leaves it out outside ipvs mode; remove it from kube_proxy.extra_args in " + t.File
	}
	where := kpargs.Finding{File: t.File, Line: t.Line, Arg: t.Arg}.Where()
	return fmt.Sprintf("%s: %s; %s", where, t.Becomes, do)
}

// TranslateIPVS lists every ipvs-only kube-proxy-arg item in args (the
// operator's, in RKE2's order) and extra (the tool's, from cfgFile), with
// what each becomes in to's proxy mode.
func TranslateIPVS(args []rke2.Setting, extra []string, cfgFile string, to backend.Backend) []Translation {
	var out []Translation
	add := func(a rke2.Setting, ours bool) {
		if becomes := translate(a.Value, to); becomes != "" {
			name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(a.Value), "--"), "=")
			out = append(out, Translation{Arg: a.Value, File: a.File, Line: a.Line, Stripped: ours && strings.HasPrefix(name, "ipvs-"), Becomes: becomes})
		}
	}
	for _, a := range args {
		add(a, false)
	}
	for _, e := range extra {
		add(rke2.Setting{Value: e, File: cfgFile}, true)
	}
	return out
}

// translate says what one item becomes outside ipvs mode; "" for an item
// that is not ipvs's. The ipvs timeouts are IPVS's own connection table;
// outside ipvs only conntrack's apply.
func translate(item string, to backend.Backend) string {
	name, value, _ := strings.Cut(strings.TrimPrefix(strings.TrimSpace(item), "--"), "=")
	value = strings.TrimSpace(value)
	mode := to.ProxyMode()
	switch name {
	case "proxy-mode":
		if value != "ipvs" {
			return ""
		}
		return fmt.Sprintf("kube-proxy must run %s mode, which the drop-in sets only once this item is gone (the operator's proxy-mode wins; switch refuses while it is there)", mode)
	case "feature-gates":
		if !strings.Contains(value, "KubeProxyIPVS") {
			return ""
		}
		return fmt.Sprintf("the gate KubeProxyIPVS gates only ipvs mode: take the pair out of the item (Kubernetes 1.%d drops the gate, and then it stops kube-proxy)", kpargs.IPVS().Gone.Minor)
	case "ipvs-scheduler":
		switch value {
		case "", "rr":
			return fmt.Sprintf("nothing: %s mode picks endpoints at random, as even as round robin", mode)
		case "sh", "mh", "dh":
			return fmt.Sprintf("%s mode has no hashing scheduler: the Services that relied on a client keeping its endpoint need sessionAffinity: ClientIP (kubectl patch service NAME -p '{\"spec\":{\"sessionAffinity\":\"ClientIP\"}}')", mode)
		}
		return fmt.Sprintf("%s mode picks endpoints at random: no equivalent of %s (Services that need a client kept on its endpoint need sessionAffinity: ClientIP)", mode, value)
	case "ipvs-strict-arp":
		return "not needed: no kube-ipvs0 answers ARP once the sweep removed it; the sweep reports the arp_ignore/arp_announce sysctls strict ARP set and leaves them (reset them only if nothing else on the node needs them)"
	case "ipvs-exclude-cidrs":
		return fmt.Sprintf("not needed: %s mode never touches IPVS, and the sweep removes only virtual servers on kube-ipvs0's addresses, never another owner's", mode)
	case "ipvs-tcp-timeout":
		return conntrack(value, "conntrack-tcp-timeout-established", "")
	case "ipvs-tcpfin-timeout":
		return conntrack(value, "", "net.netfilter.nf_conntrack_tcp_timeout_fin_wait")
	case "ipvs-udp-timeout":
		return conntrack(value, "conntrack-udp-timeout", "")
	case "ipvs-sync-period":
		return fmt.Sprintf("iptables-sync-period=%s (%s mode reads it)", value, mode)
	case "ipvs-min-sync-period":
		return fmt.Sprintf("iptables-min-sync-period=%s (%s mode reads it)", value, mode)
	}
	if strings.HasPrefix(name, "ipvs-") {
		return fmt.Sprintf("nothing: --%s applies only to ipvs mode", name)
	}
	return ""
}

// conntrack is an ipvs timeout's conntrack setting: the kube-proxy flag
// when there is one, else the kernel's sysctl. 0 is IPVS's default.
func conntrack(value, flag, sysctl string) string {
	if value == "0" || value == "0s" || value == "" {
		return "nothing: 0 kept IPVS's default"
	}
	if flag != "" {
		return fmt.Sprintf("%s=%s (conntrack's timeout for those connections, which kube-proxy sets outside ipvs)", flag, value)
	}
	return fmt.Sprintf("kube-proxy has no flag for it: the sysctl %s is conntrack's (set it in /etc/sysctl.d, in seconds, if %s mattered)", sysctl, value)
}
