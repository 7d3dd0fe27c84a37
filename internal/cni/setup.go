package cni

import (
	"fmt"
	"strings"
)

// The CNIs RKE2 bundles (docs.rke2.io networking/basic_network_options).
const (
	Canal   = "canal" // RKE2's default
	Calico  = "calico"
	Flannel = "flannel"
	Cilium  = "cilium"
	Multus  = "multus" // a meta-plugin listed before the primary one
	None    = "none"   // the operator installs a CNI of their own
	// K3sFlannel is k3s's built-in flannel, which runs inside the k3s
	// process and writes iptables rules only (k3s#12849): no chart moves
	// it, and beside kube-proxy's nftables mode it stays in iptables-nft.
	K3sFlannel = "k3s-flannel"
)

// Setting is one chart value, a dotted key and its value.
type Setting struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

// nftablesValues are, per CNI, the chart values that move it to nftables,
// as RKE2's own CNI tests write them (rancher/rke2 tests: the canal,
// flannel and calico HelmChartConfigs for the nftables filter). Cilium
// writes its few iptables rules with the backend it detects and needs none.
// A switch, not a map: the generator links this package, and a map would
// be built at every boot's start, RKE2 or not.
func nftablesValues(cni string) (values []Setting, bundled bool) {
	switch cni {
	case Canal:
		return []Setting{{"calico.felixIptablesBackend", "nft"}, {"flannel.enableNFTables", true}}, true
	case Flannel:
		return []Setting{{"flannel.enableNFTables", true}}, true
	case Calico:
		return []Setting{{"installation.calicoNetwork.linuxDataplane", "Nftables"}}, true
	case Cilium:
		return nil, true
	}
	return nil, false
}

// ChartName is the HelmChart RKE2 installs a bundled CNI with.
func ChartName(cni string) string { return "rke2-" + cni }

// CoreDNSChart carries NodeLocal DNSCache (value nodelocal.enabled).
const CoreDNSChart = "rke2-coredns"

// Setup is what a node's RKE2 runs for pod networking.
type Setup struct {
	// CNIs are RKE2's `cni:` entries in order ([canal] by default).
	CNIs []string `json:"cnis"`
	// Primary is the CNI that is not multus ("" when only multus is listed).
	Primary string `json:"primary"`
	// Source says where CNIs came from: "cni: in <file>" or RKE2's default.
	Source string `json:"source"`
	// Charts are the HelmChartConfigs in RKE2's server manifests directory.
	Charts []ChartConfig `json:"charts,omitempty"`
	// NodeLocalDNS is the file enabling NodeLocal DNSCache ("" when off).
	NodeLocalDNS string `json:"nodelocal_dns,omitempty"`
}

// NewSetup reads RKE2's `cni:` value (nil when unset; file is where it was
// set) and the chart configs.
func NewSetup(cnis []string, file string, charts []ChartConfig) Setup {
	s := Setup{Source: "cni: in " + file, Charts: charts}
	for _, c := range cnis {
		for _, part := range strings.Split(c, ",") {
			if p := strings.ToLower(strings.TrimSpace(part)); p != "" {
				s.CNIs = append(s.CNIs, p)
			}
		}
	}
	if len(s.CNIs) == 0 {
		s.CNIs, s.Source = []string{Canal}, "RKE2's default, as no cni: is set"
	}
	for _, c := range s.CNIs {
		if c != Multus {
			s.Primary = c
			break
		}
	}
	for _, c := range charts {
		if c.Chart != CoreDNSChart {
			continue
		}
		if v, ok := c.Value("nodelocal.enabled"); ok && truthy(v) {
			s.NodeLocalDNS = c.File
		} else if ok {
			s.NodeLocalDNS = "" // a later file turns it off again
		}
	}
	return s
}

// K3sSetup is a k3s node's pod networking: its built-in flannel, or, with
// flannel-backend: none, a CNI of the operator's own (None). source says
// where that was set, or that k3s's default stands. k3s has no server
// manifests for RKE2's CNI charts, so there are no chart configs.
func K3sSetup(flannel bool, source string) Setup {
	primary := K3sFlannel
	if !flannel {
		primary = None
	}
	return Setup{CNIs: []string{primary}, Primary: primary, Source: source}
}

// Follow says whether the CNI goes along with kube-proxy's nftables mode.
type Follow struct {
	// Refuse is set when it cannot: nftables mode would leave pods with
	// rules in two backends. Why says which and what to change.
	Refuse bool `json:"refuse"`
	// Unconfirmed is set when the CNI is not one RKE2 bundles.
	Unconfirmed bool   `json:"unconfirmed,omitempty"`
	Why         string `json:"why,omitempty"`
	// Chart and Missing are the HelmChartConfig values still to set (none
	// when the operator's HelmChartConfig already has them).
	Chart   string    `json:"chart,omitempty"`
	Missing []Setting `json:"missing,omitempty"`
}

// NFTables judges whether this setup can follow kube-proxy to nftables.
func (s Setup) NFTables() Follow {
	if s.NodeLocalDNS != "" {
		return Follow{Refuse: true, Why: fmt.Sprintf("NodeLocal DNSCache is enabled (nodelocal.enabled in %s) and programs iptables rules only (kubernetes/dns#682); turn it off to run nftables mode", s.NodeLocalDNS)}
	}
	if s.Primary == K3sFlannel {
		// Nothing to set: its iptables rules belong in iptables-nft,
		// which shares nf_tables with kube-proxy's tables.
		return Follow{}
	}
	want, bundled := nftablesValues(s.Primary)
	if !bundled {
		name := s.Primary
		if name == "" {
			name = "none besides multus"
		}
		return Follow{Unconfirmed: true, Why: fmt.Sprintf("RKE2's CNI is %s (%s), not one RKE2 bundles, so whether it follows kube-proxy into nftables cannot be told", name, s.Source)}
	}
	f := Follow{Chart: ChartName(s.Primary)}
	for _, w := range want {
		v, file, set := s.lastValue(f.Chart, w.Key)
		switch {
		case !set:
			f.Missing = append(f.Missing, w)
		case !sameValue(v, w.Value):
			return Follow{Refuse: true, Chart: f.Chart, Why: fmt.Sprintf("%s sets %s: %v for %s, which keeps %s on iptables; set it to %v to run nftables mode", file, w.Key, v, f.Chart, s.Primary, w.Value)}
		}
	}
	return f
}

// lastValue returns the value of key in the last HelmChartConfig for chart
// that sets it (files are read in name order, as RKE2 applies them).
func (s Setup) lastValue(chart, key string) (v any, file string, ok bool) {
	for _, c := range s.Charts {
		if c.Chart != chart {
			continue
		}
		if cv, found := c.Value(key); found {
			v, file, ok = cv, c.File, true
		}
	}
	return v, file, ok
}

// NFTablesValues returns the chart and the values that switch cni to
// nftables (ok false for a CNI RKE2 does not bundle).
func NFTablesValues(cni string) (chart string, values []Setting, ok bool) {
	values, ok = nftablesValues(cni)
	return ChartName(cni), values, ok
}

func sameValue(got, want any) bool {
	if b, isBool := want.(bool); isBool {
		return truthy(got) == b
	}
	return strings.EqualFold(fmt.Sprint(got), fmt.Sprint(want))
}

func truthy(v any) bool {
	switch t := v.(type) {
	case bool:
		return t
	case string:
		return strings.EqualFold(strings.TrimSpace(t), "true")
	}
	return false
}
