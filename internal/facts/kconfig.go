package facts

import (
	"bytes"
	"fmt"
	"io"
)

// KernelOptions are the netfilter options the probe records (names without
// CONFIG_): what each backend needs (backend.Requirements) and what
// kube-proxy's nftables mode uses.
var KernelOptions = []string{
	"NF_TABLES", "NFT_COMPAT", "NF_TABLES_IPV4", "NF_TABLES_IPV6", "NF_TABLES_INET",
	"NETFILTER_XTABLES", "NETFILTER_XTABLES_LEGACY",
	"IP_NF_IPTABLES", "IP_NF_IPTABLES_LEGACY", "IP6_NF_IPTABLES", "IP6_NF_IPTABLES_LEGACY",
	"IP_NF_FILTER", "IP_NF_NAT", "IP_NF_MANGLE",
	"NFT_CT", "NFT_NAT", "NFT_MASQ", "NFT_NUMGEN", "NFT_FIB_IPV4", "NFT_FIB_IPV6",
	"NFT_REJECT", "NFT_CHAIN_NAT", "NFT_COUNTER",
	// The xtables extensions kube-proxy's iptables rules use, so that a
	// module configured =m but missing on disk can be named (EL10 ships
	// them in kernel-modules-extra).
	"NETFILTER_XT_MATCH_COMMENT", "NETFILTER_XT_MATCH_CONNTRACK", "NETFILTER_XT_MATCH_ADDRTYPE",
	"NETFILTER_XT_MATCH_STATISTIC", "NETFILTER_XT_MATCH_RECENT", "NETFILTER_XT_MARK",
	"NETFILTER_XT_NAT", "NETFILTER_XT_TARGET_MASQUERADE",
	// PREEMPT_RT kernels cannot have legacy xtables (raspberrypi/linux#7213).
	"PREEMPT_RT",
	// kube-proxy's ipvs mode cannot start without IPVS and ipset (both
	// sit in the netfilter menus, before netfilterEnd).
	"IP_VS", "IP_SET",
}

// maxConfigLine bounds one line; real kernel configs stay far below it.
const maxConfigLine = 64 * 1024

// ParseKernelConfig reads a kernel .config and returns every tristate option
// set in it (names without CONFIG_): "CONFIG_X=y" and "=m" as given,
// "=n" and "# CONFIG_X is not set" as Absent. Options with string or
// number values are not tristates and are left out. It fails when the
// input is not text of a kernel config at all (no CONFIG_ line), so a
// corrupt file is reported instead of read as "nothing enabled".
func ParseKernelConfig(r io.Reader) (map[string]Tristate, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return parseKernelConfig(data, nil)
}

// parseKernelConfig is ParseKernelConfig on bytes, keeping only the options
// in want (all when want is nil). The probe runs on every boot's critical
// path and a distro config has ~10,000 lines of which it needs ~25, so the
// scan works on bytes and allocates only for kept options.
func parseKernelConfig(data []byte, want map[string]bool) (map[string]Tristate, error) {
	c := configParser{opts: map[string]Tristate{}, want: want}
	for len(data) > 0 {
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if err := c.line(raw); err != nil {
			return nil, err
		}
	}
	return c.result()
}

// configParser takes a kernel config one line at a time, so a compressed
// config can be parsed as it is decompressed, without holding it whole.
type configParser struct {
	opts      map[string]Tristate
	want      map[string]bool
	n         int
	sawConfig bool
}

func (c *configParser) line(raw []byte) error {
	c.n++
	if len(raw) > maxConfigLine {
		return fmt.Errorf("line %d: longer than %d bytes: not a kernel config line", c.n, maxConfigLine)
	}
	text := bytes.TrimSpace(raw)
	if name, ok := notSet(text); ok {
		keep(c.opts, c.want, name, Absent)
		c.sawConfig = true
		return nil
	}
	if len(text) == 0 || text[0] == '#' {
		return nil
	}
	key, value, found := bytes.Cut(text, []byte("="))
	name, isConfig := bytes.CutPrefix(key, []byte("CONFIG_"))
	if !found || !isConfig || !validOption(name) {
		return fmt.Errorf("line %d is not a CONFIG_NAME=value line", c.n)
	}
	c.sawConfig = true
	if len(value) != 1 {
		return nil
	}
	switch value[0] {
	case 'y':
		keep(c.opts, c.want, name, Builtin)
	case 'm':
		keep(c.opts, c.want, name, Module)
	case 'n':
		keep(c.opts, c.want, name, Absent)
	}
	return nil
}

func (c *configParser) result() (map[string]Tristate, error) {
	if !c.sawConfig {
		return nil, fmt.Errorf("no CONFIG_ lines: not a kernel config")
	}
	return c.opts, nil
}

// keep records an option when it is wanted; the map lookup with a
// string(bytes) key does not allocate.
func keep(opts map[string]Tristate, want map[string]bool, name []byte, v Tristate) {
	if want != nil && !want[string(name)] {
		return
	}
	opts[string(name)] = v
}

// notSet recognises "# CONFIG_X is not set".
func notSet(text []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(text, []byte("# CONFIG_"))
	if !ok {
		return nil, false
	}
	name, ok := bytes.CutSuffix(rest, []byte(" is not set"))
	if !ok || !validOption(name) {
		return nil, false
	}
	return name, true
}

func validOption(name []byte) bool {
	if len(name) == 0 {
		return false
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
