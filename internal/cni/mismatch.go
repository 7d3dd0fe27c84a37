package cni

import (
	"fmt"
	"strings"
)

// Mismatch is a chart value that puts the CNI's rules in another backend
// than kube-proxy's.
type Mismatch struct {
	Chart, Key, File string
	Got, Want        any
	What             string // the CNI component that writes elsewhere
}

// BackendMismatches lists the operator's chart values that keep the CNI in
// another backend than kube-proxy's: proxyMode is "iptables" or "nftables",
// iptablesMode "legacy" or "nft". Felix's felixIptablesBackend Auto is not
// listed: it guesses at start (calico#13328), which verify can only judge
// from the live rules.
func (s Setup) BackendMismatches(proxyMode, iptablesMode string) []Mismatch {
	var out []Mismatch
	check := func(chart, key, what string, want any, ok func(any) bool) {
		v, file, set := s.lastValue(chart, key)
		if set && !ok(v) {
			out = append(out, Mismatch{Chart: chart, Key: key, File: file, Got: v, Want: want, What: what})
		}
	}
	nft := proxyMode == "nftables"
	switch s.Primary {
	case Canal, Flannel:
		check(ChartName(s.Primary), "flannel.enableNFTables", "flannel", nft, func(v any) bool { return truthy(v) == nft })
	}
	switch s.Primary {
	case Canal:
		want := map[string]string{"legacy": "legacy", "nft": "nft"}[iptablesMode]
		if nft {
			want = "nft"
		}
		check(ChartName(Canal), "calico.felixIptablesBackend", "Felix", want, func(v any) bool {
			got := strings.ToLower(fmt.Sprint(v))
			return got == "auto" || want == "" || got == want
		})
	case Calico:
		want := "Iptables"
		if nft {
			want = "Nftables"
		}
		check(ChartName(Calico), "installation.calicoNetwork.linuxDataplane", "Calico", want, func(v any) bool {
			got := strings.ToLower(fmt.Sprint(v))
			return got == strings.ToLower(want) || got == "bpf" || got == "vpp"
		})
	}
	return out
}
