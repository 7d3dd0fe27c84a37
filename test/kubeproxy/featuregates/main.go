// Command featuregates asks kube-proxy's own feature gate registry what it
// makes of --feature-gates values: it registers the gates exactly as
// kube-proxy does (k8s.io/kubernetes/pkg/features at import, then the
// metrics and logging gates cmd/kube-proxy/app's init adds), parses each
// argument with the flag type kube-proxy's --feature-gates uses, and calls
// SetFromMap as kube-proxy's Options.Complete does. It prints one line per
// argument, "ok <value>" or "refused <value>: <error>", then "known <gate>"
// for every gate the registry knows. Tests compare the project's data on
// removed and locked gates with these answers, per Kubernetes minor.
//
//	go build -modfile=../go.v1.37.mod -o featuregates . && ./featuregates 'NFTablesProxyMode=false'
package main

import (
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/featuregate"
	logsapi "k8s.io/component-base/logs/api/v1"
	metricsfeatures "k8s.io/component-base/metrics/features"
	_ "k8s.io/kubernetes/pkg/features"
)

func main() {
	runtime.Must(metricsfeatures.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
	runtime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
	for _, value := range os.Args[1:] {
		fmt.Println(judge(value))
	}
	for _, name := range utilfeature.DefaultFeatureGate.KnownFeatures() {
		fmt.Println("known", name)
	}
}

// judge sets value on a fresh copy of the registry, so one argument's
// gates never change the next one's answer.
func judge(value string) string {
	gates := map[string]bool{}
	if err := cliflag.NewMapStringBool(&gates).Set(value); err != nil {
		return fmt.Sprintf("refused %s: %v", value, err)
	}
	var fg featuregate.MutableFeatureGate = utilfeature.DefaultMutableFeatureGate.DeepCopy()
	if err := fg.SetFromMap(gates); err != nil {
		return fmt.Sprintf("refused %s: %v", value, err)
	}
	return "ok " + value
}
