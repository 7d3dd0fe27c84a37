package facts

import (
	"bufio"
	"fmt"
	"io"
	"strings"
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
	opts := map[string]Tristate{}
	sawConfig := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxConfigLine)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if name, ok := notSet(text); ok {
			opts[name] = Absent
			sawConfig = true
			continue
		}
		if text == "" || text[0] == '#' {
			continue
		}
		key, value, found := strings.Cut(text, "=")
		name, isConfig := strings.CutPrefix(key, "CONFIG_")
		if !found || !isConfig || !validOption(name) {
			return nil, fmt.Errorf("line %d: %q is not a CONFIG_NAME=value line", line, clip(text))
		}
		sawConfig = true
		switch value {
		case "y":
			opts[name] = Builtin
		case "m":
			opts[name] = Module
		case "n":
			opts[name] = Absent
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if !sawConfig {
		return nil, fmt.Errorf("no CONFIG_ lines: not a kernel config")
	}
	return opts, nil
}

// notSet recognises "# CONFIG_X is not set".
func notSet(text string) (string, bool) {
	rest, ok := strings.CutPrefix(text, "# CONFIG_")
	if !ok {
		return "", false
	}
	name, ok := strings.CutSuffix(rest, " is not set")
	if !ok || !validOption(name) {
		return "", false
	}
	return name, true
}

func validOption(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// clip keeps error messages short when a file is binary garbage.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
