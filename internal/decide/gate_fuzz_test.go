package decide

import (
	"strings"
	"testing"
)

// FuzzNFTablesGateIn: the gate counts as enabled only when kube-proxy would
// enable it (exact name, a true value), and a name in another letter case
// is reported, never taken for the gate.
func FuzzNFTablesGateIn(f *testing.F) {
	for _, seed := range []string{"NFTablesProxyMode=true", "nftablesproxymode=true", "A=true, NFTablesProxyMode = 1",
		"XNFTablesProxyMode=true", "NFTablesProxyMode=false", "NFTablesProxyMode", ",,=", "NFTABLESPROXYMODE=true,NFTablesProxyMode=t"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		enabled, miscased := nftablesGateIn(value)
		if enabled && !strings.Contains(value, "NFTablesProxyMode") {
			t.Fatalf("%q enables the gate without naming it exactly", value)
		}
		if miscased && !strings.Contains(strings.ToLower(value), "nftablesproxymode") {
			t.Fatalf("%q reported as a miscased gate", value)
		}
		for _, item := range strings.Split(value, ",") {
			k, _, _ := strings.Cut(item, "=")
			if strings.TrimSpace(k) == "NFTablesProxyMode" {
				return
			}
		}
		if enabled {
			t.Fatalf("%q: enabled, but no item names the gate", value)
		}
	})
}
