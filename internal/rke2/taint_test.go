package rke2

import (
	"strings"
	"testing"
)

func TestParseTaint(t *testing.T) {
	for _, ok := range []string{
		"rke2-proxy-backend/backend=iptables-legacy:NoSchedule",
		"rke2-proxy-backend/backend=nftables:PreferNoSchedule",
		"dedicated=legacy_nas.1:NoExecute",
	} {
		got, err := ParseTaint(ok)
		if err != nil || got.String() != ok {
			t.Errorf("ParseTaint(%q) = %v, %v; want it back unchanged", ok, got, err)
		}
	}
	for bad, says := range map[string]string{
		"":                                       "empty",
		"rke2-proxy-backend/backend=nftables":    "key=value:Effect",
		"rke2-proxy-backend/backend:NoSchedule":  "key=value:Effect",
		"rke2-proxy-backend/backend=:NoSchedule": "key=value:Effect",
		"rke2-proxy-backend/backend=nftables:noschedule":           `effect "noschedule"`,
		"rke2-proxy-backend/backend=nftables:NoSchedule:NoExecute": "effect",
		"Bad_Prefix/backend=nftables:NoSchedule":                   "prefix",
		"rke2-proxy-backend/=nftables:NoSchedule":                  "name",
		"rke2-proxy-backend/backend=-nftables:NoSchedule":          "value",
		"rke2-proxy-backend/backend=a b:NoSchedule":                "value",
		"rke2-proxy-backend/backend=nft\nx:NoSchedule":             "control",
		"k=" + strings.Repeat("a", 64) + ":NoSchedule":             "longer than 63",
		"rke2-proxy-backend/backend=nftables,x=y:NoSchedule":       "value",
	} {
		if _, err := ParseTaint(bad); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("ParseTaint(%q) = %v; want an error saying %q", bad, err, says)
		}
	}
}

// FuzzParseTaint: whatever is accepted renders back identically and is a
// single YAML list item in the drop-in.
func FuzzParseTaint(f *testing.F) {
	f.Add("rke2-proxy-backend/backend=iptables-legacy:NoSchedule")
	f.Add("a=b:NoExecute")
	f.Add("a/b/c=d:NoSchedule")
	f.Fuzz(func(t *testing.T, v string) {
		tn, err := ParseTaint(v)
		if err != nil {
			return
		}
		if tn.String() != v {
			t.Fatalf("ParseTaint(%q) renders as %q", v, tn.String())
		}
		if strings.ContainsAny(v, ",\"' \n#") {
			t.Fatalf("ParseTaint accepted %q, which kubelet's comma-separated flag would split or YAML would mangle", v)
		}
	})
}
