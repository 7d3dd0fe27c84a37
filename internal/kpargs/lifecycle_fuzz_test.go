package kpargs

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// FuzzParseLifecycle: whatever parses renders back, one canonical row per
// fact, to text that parses to the same facts (line numbers aside); and
// lifecycle.txt itself is in the corpus.
func FuzzParseLifecycle(f *testing.F) {
	f.Add(lifecycleText)
	f.Add("removed A 1.38 src\nlocked B=false 1.2 x y\n# c\n")
	f.Add("locked B=1 1.30 s\nadded C 1.0 s")
	f.Fuzz(func(t *testing.T, text string) {
		facts, err := ParseLifecycle(text)
		if err != nil {
			if !strings.Contains(err.Error(), "lifecycle.txt line ") {
				t.Fatalf("error %q names no line", err)
			}
			return
		}
		var b strings.Builder
		for _, fc := range facts {
			name := fc.Gate
			if fc.Kind == kindLocked {
				name = fmt.Sprintf("%s=%t", fc.Gate, fc.Value)
			}
			fmt.Fprintf(&b, "%s %s 1.%d %s\n", fc.Kind, name, fc.Minor, fc.Source)
		}
		again, err := ParseLifecycle(b.String())
		if err != nil {
			t.Fatalf("rendered facts do not parse: %v\n%s", err, b.String())
		}
		for i := range facts {
			facts[i].Line, again[i].Line = 0, 0
		}
		if !reflect.DeepEqual(facts, again) {
			t.Fatalf("round trip changed the facts:\n%+v\n%+v", facts, again)
		}
	})
}
