package oracle

import "testing"

// featureGates is test/kubeproxy/featuregates: kube-proxy's own feature
// gate registry, asked what it makes of --feature-gates values. It keeps
// its builds beside the oracles', in .cache/oracle/featuregates/<minor>/,
// so neither prunes the other's.
var featureGates = program{pkg: "./featuregates", name: "featuregates", cache: []string{"featuregates"},
	globs: []string{"featuregates/*.go", "*-stub/go.mod"}, what: "kube-proxy feature gate registry"}

// FeatureGates returns the registry program built for a Kubernetes minor
// (one of Minors), on first use with the minor's mod file and toolchain
// (seconds once the oracle's build cache is warm).
func FeatureGates(t testing.TB, minor string) string {
	t.Helper()
	bin, err := featureGates.build(minor, "")
	if err != nil {
		t.Fatalf("building kube-proxy's feature gate registry for %s: %v", minor, err)
	}
	return bin
}
