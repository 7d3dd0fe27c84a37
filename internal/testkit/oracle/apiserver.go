package oracle

import "testing"

// APIServerMinor is the Kubernetes minor of the test API server: the
// newest one that builds with the project's own Go (1.38 needs a newer
// toolchain). One minor is enough, as the tool uses only the Node API,
// stable since 1.0.
const APIServerMinor = "v1.37"

// apiServer is test/kubeproxy/apiserver: kube-apiserver with an embedded
// etcd, built with go.apiserver.<minor>.mod (the oracle's modules plus
// etcd's server and the API server's own), its builds beside the oracles'
// in .cache/oracle/apiserver/<minor>/ so neither prunes the other's.
var apiServer = program{pkg: "./apiserver", name: "apiserver", cache: []string{"apiserver"},
	globs: []string{"apiserver/*.go"}, mod: "go.apiserver.", what: "test kube-apiserver"}

// APIServer returns the API server program, built on first use (a cold
// build compiles most of Kubernetes' control plane: many minutes on two
// cores; `make oracle` builds it before the tests).
func APIServer(t testing.TB) string {
	t.Helper()
	bin, err := apiServer.build(APIServerMinor, "")
	if err != nil {
		t.Fatalf("building the test kube-apiserver (%s): %v", APIServerMinor, err)
	}
	return bin
}
