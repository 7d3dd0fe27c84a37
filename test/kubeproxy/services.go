package main

import (
	"fmt"
	"math/big"
	"net"

	v1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The kinds of Service the oracle cycles through, so that any N >= kinds
// covers every rule shape both proxiers emit. Without IPv6 the two IPv6
// kinds become IPv4 ones (a single-stack node has no IPv6 services).
const (
	kindClusterIP = iota
	kindNodePort
	kindLoadBalancerLocal
	kindExternalIPs
	kindClientIPAffinity
	kindNoEndpoints
	kindDualStack
	kindIPv6Only
	kinds
)

const namespace = "oracle"

// cluster is a deterministic set of Services and their EndpointSlices:
// service i always gets the same name, kind, addresses and ports, so two
// runs with the same flags program the same rules.
type cluster struct {
	Services []*v1.Service
	Slices   []*discovery.EndpointSlice
}

// nodeInSourceRanges adds the node's IPv4 address to the LoadBalancer's
// source ranges: ipvs mode otherwise blocks the node's own access to it
// with the xt_ipvs match (-m ipvs), which needs the ip_vs module that the
// kernels the oracle runs on may lack, so ipvs mode feeds this cluster.
func newCluster(n int, ipv6, nodeInSourceRanges bool) *cluster {
	c := &cluster{}
	g := &generator{ipv6: ipv6, nextNodePort: 30000, nodeInSourceRanges: nodeInSourceRanges}
	for i := 0; i < n; i++ {
		svc, endpoints := g.service(i)
		c.Services = append(c.Services, svc)
		c.Slices = append(c.Slices, g.slices(i, svc, endpoints)...)
	}
	return c
}

type generator struct {
	ipv6               bool
	nodeInSourceRanges bool
	nextNodePort       int32
	nextPod            int64
}

// service builds Service i and says how many endpoints it has.
func (g *generator) service(i int) (*v1.Service, int) {
	kind := i % kinds
	if !g.ipv6 && kind == kindDualStack {
		kind = kindClusterIP
	}
	svc := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: fmt.Sprintf("svc-%05d", i)},
		Spec: v1.ServiceSpec{
			Type:            v1.ServiceTypeClusterIP,
			SessionAffinity: v1.ServiceAffinityNone,
			Ports:           []v1.ServicePort{tcpPort("http", 80, 8080)},
		},
	}
	single := func(f v1.IPFamily) {
		ip := addr(serviceCIDRs[f], int64(10+i))
		svc.Spec.ClusterIP = ip
		svc.Spec.ClusterIPs = []string{ip}
		svc.Spec.IPFamilies = []v1.IPFamily{f}
		policy := v1.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy = &policy
	}
	single(v1.IPv4Protocol)
	endpoints := 2 + i%2
	switch kind {
	case kindNodePort:
		svc.Spec.Type = v1.ServiceTypeNodePort
		svc.Spec.Ports = []v1.ServicePort{tcpPort("tcp", 80, 8080), udpPort("udp", 53, 5353)}
		for p := range svc.Spec.Ports {
			svc.Spec.Ports[p].NodePort = g.nodePort()
		}
	case kindLoadBalancerLocal:
		svc.Spec.Type = v1.ServiceTypeLoadBalancer
		svc.Spec.Ports[0].NodePort = g.nodePort()
		svc.Spec.ExternalTrafficPolicy = v1.ServiceExternalTrafficPolicyLocal
		svc.Spec.HealthCheckNodePort = g.nodePort()
		svc.Spec.LoadBalancerSourceRanges = []string{"203.0.113.0/24", "198.51.100.0/24"}
		if g.nodeInSourceRanges {
			svc.Spec.LoadBalancerSourceRanges = append(svc.Spec.LoadBalancerSourceRanges, nodeIPs[v1.IPv4Protocol].String()+"/32")
		}
		svc.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: addr("172.16.0.0/12", int64(i))}}
	case kindExternalIPs:
		svc.Spec.ExternalIPs = []string{addr("198.18.0.0/15", int64(i))}
	case kindClientIPAffinity:
		svc.Spec.SessionAffinity = v1.ServiceAffinityClientIP
		timeout := int32(v1.DefaultClientIPServiceAffinitySeconds)
		svc.Spec.SessionAffinityConfig = &v1.SessionAffinityConfig{ClientIP: &v1.ClientIPConfig{TimeoutSeconds: &timeout}}
	case kindNoEndpoints:
		endpoints = 0
	case kindDualStack:
		v4, v6 := addr(serviceCIDRs[v1.IPv4Protocol], int64(10+i)), addr(serviceCIDRs[v1.IPv6Protocol], int64(10+i))
		svc.Spec.ClusterIPs = []string{v4, v6}
		svc.Spec.IPFamilies = []v1.IPFamily{v1.IPv4Protocol, v1.IPv6Protocol}
		policy := v1.IPFamilyPolicyRequireDualStack
		svc.Spec.IPFamilyPolicy = &policy
		svc.Spec.Type = v1.ServiceTypeNodePort
		svc.Spec.Ports[0].NodePort = g.nodePort()
	case kindIPv6Only:
		if g.ipv6 {
			single(v1.IPv6Protocol)
			break
		}
		// A single-stack node: the LoadBalancer kind with the defaults
		// (externalTrafficPolicy: Cluster) instead.
		svc.Spec.Type = v1.ServiceTypeLoadBalancer
		svc.Spec.Ports[0].NodePort = g.nodePort()
		svc.Status.LoadBalancer.Ingress = []v1.LoadBalancerIngress{{IP: addr("172.16.0.0/12", int64(i))}}
	}
	return svc, endpoints
}

// slices builds one EndpointSlice per IP family of the Service. The first
// endpoint runs on this node, so externalTrafficPolicy: Local has a local
// endpoint; the others on other nodes.
func (g *generator) slices(i int, svc *v1.Service, endpoints int) []*discovery.EndpointSlice {
	if endpoints == 0 {
		return nil
	}
	var out []*discovery.EndpointSlice
	for _, f := range svc.Spec.IPFamilies {
		slice := &discovery.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: namespace,
				Name:      fmt.Sprintf("%s-%s", svc.Name, map[v1.IPFamily]string{v1.IPv4Protocol: "v4", v1.IPv6Protocol: "v6"}[f]),
				Labels:    map[string]string{discovery.LabelServiceName: svc.Name},
			},
			AddressType: discovery.AddressType(f),
		}
		for _, p := range svc.Spec.Ports {
			name, proto, port := p.Name, p.Protocol, int32(p.TargetPort.IntValue())
			slice.Ports = append(slice.Ports, discovery.EndpointPort{Name: &name, Protocol: &proto, Port: &port})
		}
		for e := 0; e < endpoints; e++ {
			node := nodeName
			if e > 0 {
				node = fmt.Sprintf("other-node-%d", e)
			}
			yes, no := true, false
			slice.Endpoints = append(slice.Endpoints, discovery.Endpoint{
				Addresses:  []string{addr(clusterCIDRs[f], 2+g.nextPod)},
				Conditions: discovery.EndpointConditions{Ready: &yes, Serving: &yes, Terminating: &no},
				NodeName:   &node,
			})
			g.nextPod++
		}
		out = append(out, slice)
	}
	return out
}

func (g *generator) nodePort() int32 {
	p := g.nextNodePort
	g.nextNodePort++
	return p
}

func tcpPort(name string, port, target int) v1.ServicePort {
	return v1.ServicePort{Name: name, Protocol: v1.ProtocolTCP, Port: int32(port), TargetPort: intstr.FromInt32(int32(target))}
}

func udpPort(name string, port, target int) v1.ServicePort {
	p := tcpPort(name, port, target)
	p.Protocol = v1.ProtocolUDP
	return p
}

// addr is the n-th address of cidr (counting from its network address).
func addr(cidr string, n int64) string {
	_, network, err := net.ParseCIDR(cidr)
	if err != nil {
		panic(fmt.Sprintf("bad built-in CIDR %q: %v", cidr, err))
	}
	base := new(big.Int).SetBytes(network.IP)
	ip := new(big.Int).Add(base, big.NewInt(n)).FillBytes(make([]byte, len(network.IP)))
	if !network.Contains(ip) {
		panic(fmt.Sprintf("address %d does not fit in %s: too many services", n, cidr))
	}
	return net.IP(ip).String()
}
