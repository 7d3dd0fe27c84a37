package kpargs

// IPVSLifecycle is kube-proxy's ipvs mode across Kubernetes minors, read
// from lifecycle.txt's KubeProxyIPVS rows so that decide words the
// deprecation from the same facts Check refuses by. A step the file does
// not have is a zero Fact (Minor 0).
type IPVSLifecycle struct {
	// Deprecated: kube-proxy warns (log line and IPVSDeprecation event).
	Deprecated Fact
	// Gate: the feature gate KubeProxyIPVS exists (on by default).
	Gate Fact
	// Off: the gate is off by default; kube-proxy refuses ipvs unless
	// --feature-gates sets KubeProxyIPVS=true.
	Off Fact
	// Gone: kube-proxy has no ipvs mode.
	Gone Fact
}

// IPVS returns the ipvs rows of lifecycle.txt.
func IPVS() IPVSLifecycle {
	first := func(kind string) Fact {
		f, _ := firstFact(kind, ipvsGate)
		return f
	}
	return IPVSLifecycle{Deprecated: first(kindIPVSDeprecated), Gate: first(kindAdded), Off: first(kindIPVSOff), Gone: first(kindIPVSGone)}
}

// ipvsGate is the feature gate KEP-5495 puts ipvs mode behind.
const ipvsGate = "KubeProxyIPVS"
