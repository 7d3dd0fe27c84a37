// Package backend names the three netfilter backends kube-proxy can use and
// what each one needs from the kernel. Every other package takes its names
// from here so that "iptables-legacy" is spelled in exactly one place.
package backend

import (
	"fmt"
	"strings"
)

// Backend is one way kube-proxy programs the kernel.
type Backend string

const (
	IptablesLegacy Backend = "iptables-legacy"
	IptablesNFT    Backend = "iptables-nft"
	NFTables       Backend = "nftables"
)

// All lists the backends in a fixed order, used for output and validation.
var All = []Backend{IptablesLegacy, IptablesNFT, NFTables}

// Parse accepts a backend name exactly as documented.
func Parse(s string) (Backend, error) {
	for _, b := range All {
		if string(b) == s {
			return b, nil
		}
	}
	return "", fmt.Errorf("unknown backend %q: valid backends are %s", s, Names())
}

// Names returns the valid names joined for error messages.
func Names() string {
	names := make([]string, len(All))
	for i, b := range All {
		names[i] = string(b)
	}
	return strings.Join(names, ", ")
}

// ProxyMode is kube-proxy's --proxy-mode for this backend.
func (b Backend) ProxyMode() string {
	if b == NFTables {
		return "nftables"
	}
	return "iptables"
}

// IptablesMode is the IPTABLES_MODE value RKE2's kube-proxy image honours
// ("legacy" or "nft"; nothing else works, see DOMAIN.md section 2). The
// nftables proxy mode does not call iptables for its own rules, but the
// image's wrapper still runs for the cleanup of the other modes, so nft is
// pinned there too to keep the detection script from racing.
func (b Backend) IptablesMode() string {
	if b == IptablesLegacy {
		return "legacy"
	}
	return "nft"
}

// UsesIptables reports whether kube-proxy's own rules go through iptables.
func (b Backend) UsesIptables() bool { return b != NFTables }
