package kubeproxy

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// kube-proxy's own defaults (cmd/kube-proxy/app/options.go, 1.34-1.37):
// --metrics-bind-address 127.0.0.1:10249, and the deprecated --metrics-port
// 10249, which is appended to an address without a port and turns the
// server off at 0.
const (
	kubeProxyMetricsAddress = "127.0.0.1"
	kubeProxyMetricsPort    = 10249
)

// Endpoint is where verify asks kube-proxy for its mode: the URL
// ("" when kube-proxy serves no metrics) and where that came from, for the
// notes.
type Endpoint struct {
	URL, Source string
}

// ProxyModeEndpoint is where kube-proxy's metrics server listens, from
// RKE2's effective kube-proxy-arg (the last metrics-bind-address= and
// metrics-port=, as repeated flags go), kube-proxy's default otherwise.
// Operators bind it to 0.0.0.0:10249 or the node's IP for scraping; asking
// 127.0.0.1:10249 then meets a refusal and used to wait out all of --wait.
// The caller reads the config (facts.EffectiveConfig): this client only asks.
func ProxyModeEndpoint(eff rke2.Effective) Endpoint {
	args, from := eff.Strings(rke2.KeyKubeProxyArg), eff.ItemOrigin[rke2.KeyKubeProxyArg]
	if _, list := eff.Values[rke2.KeyKubeProxyArg].([]string); !list && len(args) == 1 {
		from = []string{eff.Origin[rke2.KeyKubeProxyArg]}
	}
	var addr, addrFrom, port, portFrom, config string
	for i, a := range args {
		k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(a), "--"), "=")
		if !ok {
			continue
		}
		src := ""
		if i < len(from) {
			src = from[i]
		}
		switch k {
		case "metrics-bind-address":
			addr, addrFrom = v, fmt.Sprintf("metrics-bind-address=%s in %s", v, src)
		case "metrics-port":
			port, portFrom = v, fmt.Sprintf("metrics-port=%s in %s", v, src)
		case "config":
			config = fmt.Sprintf("config=%s in %s", v, src)
		}
	}
	def := fmt.Sprintf("http://%s:%d/proxyMode", kubeProxyMetricsAddress, kubeProxyMetricsPort)
	if config != "" {
		// kube-proxy ignores the address flags when it reads a config file.
		return Endpoint{URL: def, Source: "kube-proxy's default (kube-proxy-arg " + config + ": the address in that file is not read)"}
	}
	source := strings.Join(nonEmpty(addrFrom, portFrom), ", ")
	if source == "" {
		source = "kube-proxy's default"
	}
	if addr == "" {
		// An empty flag leaves kube-proxy's default in place.
		addr = kubeProxyMetricsAddress
	}
	p := kubeProxyMetricsPort
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return Endpoint{URL: def, Source: fmt.Sprintf("kube-proxy's default (%s is not a port)", portFrom)}
		}
		if n == 0 {
			return Endpoint{Source: portFrom + " turns kube-proxy's metrics server off"}
		}
		p = int(n)
	}
	host, hostPort, err := net.SplitHostPort(addr)
	if err != nil {
		host, hostPort = addr, strconv.Itoa(p)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return Endpoint{URL: def, Source: fmt.Sprintf("kube-proxy's default (%s is not an IP address or IP:port)", addrFrom)}
	}
	// A server bound to every address answers on loopback.
	switch {
	case ip.IsUnspecified() && ip.To4() != nil:
		ip = net.IPv4(127, 0, 0, 1)
	case ip.IsUnspecified():
		ip = net.IPv6loopback
	}
	return Endpoint{URL: "http://" + net.JoinHostPort(ip.String(), hostPort) + "/proxyMode", Source: source}
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, v := range s {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// isNodeAddress reports whether ip is one of this host's own interface
// addresses: kube-proxy can only bind to those, and a request there stays
// on the node.
func isNodeAddress(ip net.IP) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}
