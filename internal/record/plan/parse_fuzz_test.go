package plan

import (
	"reflect"
	"testing"
)

// FuzzParse: whatever Parse accepts, Marshal writes back in a form Parse
// reads to the same plan, so facts' earlier-plan check and verify's
// expectation see what apply recorded.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"decision":{"backend":"iptables-nft","reasons":["x"]},"modules_loaded":["nf_tables"]}`))
	f.Add([]byte(`{"decision":{"disabled":true,"backend":""}}`))
	f.Add([]byte(`{half`))
	f.Add([]byte(`{"schema":1,"decision":{"backend":"nftables"}}`))
	f.Add([]byte(`{"schema":1,"decision":{"backend":"iptables-legacy"},"drop_in":"/x"}`))
	f.Add([]byte(`{"schema":2,"applied":{"backend":"iptables-legacy","by":"apply"},"decision":{"backend":"iptables-legacy"},"refused":[{"backend":"iptables-nft","plan":"auto","why":"w"}]}`))
	f.Add([]byte(`{"schema":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		if p.Schema != Schema {
			t.Fatalf("Parse(%q) accepted schema %d", data, p.Schema)
		}
		out, err := Marshal(p)
		if err != nil {
			t.Fatalf("Marshal(%+v): %v", p, err)
		}
		back, err := Parse(out)
		if err != nil || !reflect.DeepEqual(normal(back), normal(p)) {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", data, back, err, p)
		}
	})
}

// normal treats empty and nil slices alike: JSON keeps no difference
// between an absent list and an empty one under omitempty.
func normal(p Plan) Plan {
	if len(p.Refused) == 0 {
		p.Refused = nil
	}
	for _, s := range []*[]string{&p.ModulesLoaded, &p.ModulesMissing, &p.Warnings, &p.Decision.Modules, &p.Decision.KubeProxyArgs,
		&p.Decision.KubeProxyEnv, &p.Decision.NodeLabels, &p.Decision.NodeTaints, &p.Decision.Respected, &p.Decision.Refused, &p.Decision.Reasons} {
		if len(*s) == 0 {
			*s = nil
		}
	}
	return p
}
