package kpargs

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseGates: what parses round-trips through FormatGates to the same
// gates; each gate is one non-empty comma item, named by the trimmed text
// before its first "=" (kube-proxy's MapStringBool.Set); and a value is
// refused exactly when one of its non-empty items has no "=" or no boolean.
func FuzzParseGates(f *testing.F) {
	for _, seed := range []string{"NFTablesProxyMode=true", "A=true,,B=0", " A = T ", "A", "A=maybe", "=true", "A=true,B", ",", "A==true", "A=true,A=false"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		gates, err := ParseGates(value)
		var items []string
		wantErr := false
		for _, it := range strings.Split(value, ",") {
			if it == "" {
				continue
			}
			items = append(items, it)
			_, v, ok := strings.Cut(it, "=")
			if _, perr := strconv.ParseBool(strings.TrimSpace(v)); !ok || perr != nil {
				wantErr = true
			}
		}
		if (err != nil) != wantErr {
			t.Fatalf("ParseGates(%q) error %v, want error %v", value, err, wantErr)
		}
		if err != nil {
			return
		}
		if len(gates) != len(items) {
			t.Fatalf("ParseGates(%q) = %d gates for %d items", value, len(gates), len(items))
		}
		for i, g := range gates {
			name, _, _ := strings.Cut(items[i], "=")
			if g.Name != strings.TrimSpace(name) || g.Text != strings.TrimSpace(items[i]) {
				t.Fatalf("gate %d of %q = %+v, item %q", i, value, g, items[i])
			}
		}
		again, err := ParseGates(FormatGates(gates))
		if err != nil {
			t.Fatalf("FormatGates(%q) = %q does not parse: %v", value, FormatGates(gates), err)
		}
		if len(again) != len(gates) {
			t.Fatalf("round trip of %q: %+v became %+v", value, gates, again)
		}
		for i := range gates {
			if again[i].Name != gates[i].Name || again[i].Value != gates[i].Value {
				t.Fatalf("round trip of %q: %+v became %+v", value, gates, again)
			}
		}
	})
}
