package costfile

import (
	"bytes"
	"testing"
)

// Whatever Parse accepts encodes and parses back to the same report, and
// it never panics on any input.
func FuzzParse(f *testing.F) {
	good, _ := Encode(Report{Services: 1000, Kernel: "6.18.0", Results: []Result{{Backend: "iptables-legacy", Steps: []Step{{Step: StepFull, WallSeconds: 0.25}}}}})
	f.Add(good)
	f.Add([]byte(`{"services":0}`))
	f.Add([]byte(`{"services":5,"results":[{"backend":"nftables"},{"backend":"nftables"}]}`))
	f.Add([]byte(`{"services":5,"results":[{"backend":"modern"}]}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := Parse(data)
		if err != nil {
			return
		}
		again, err := Encode(rep)
		if err != nil {
			t.Fatalf("accepted report does not encode: %v", err)
		}
		rep2, err := Parse(again)
		if err != nil {
			t.Fatalf("encoded report does not parse: %v\n%s", err, again)
		}
		third, _ := Encode(rep2)
		if !bytes.Equal(again, third) {
			t.Fatalf("round trip changed the report:\n%s\n%s", again, third)
		}
	})
}

func TestParseRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"zero services":   `{"services":0}`,
		"unknown backend": `{"services":5,"results":[{"backend":"modern"}]}`,
		"twice":           `{"services":5,"results":[{"backend":"nftables"},{"backend":"nftables"}]}`,
		"negative":        `{"services":5,"results":[{"backend":"nftables","steps":[{"step":"full","wall_seconds":-1}]}]}`,
		"too large":       `{"services":5,"kernel":"` + string(bytes.Repeat([]byte("x"), MaxSize)) + `"}`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%s: Parse accepted %.80s", name, in)
		}
	}
}
