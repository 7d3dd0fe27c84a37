package bench

import (
	"bytes"
	"strings"
	"testing"
)

// Whatever Parse accepts encodes and parses back to the same report, and
// it never panics on any input.
func FuzzParse(f *testing.F) {
	good, _ := Encode(Report{Services: 1000, Kernel: "6.18.0", Results: []Result{{Backend: "iptables-legacy", Steps: []Step{{Step: StepFull, WallSeconds: 0.25}}}}})
	f.Add(good)
	f.Add([]byte(`{"schema":1,"services":0}`))
	f.Add([]byte(`{"schema":1,"services":5,"results":[{"backend":"nftables"},{"backend":"nftables"}]}`))
	f.Add([]byte(`{"schema":1,"services":5,"results":[{"backend":"modern"}]}`))
	f.Add([]byte(`{"schema":2,"services":5}`))
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
		"zero services":   `{"schema":1,"services":0}`,
		"unknown backend": `{"schema":1,"services":5,"results":[{"backend":"modern"}]}`,
		"twice":           `{"schema":1,"services":5,"results":[{"backend":"nftables"},{"backend":"nftables"}]}`,
		"negative":        `{"schema":1,"services":5,"results":[{"backend":"nftables","steps":[{"step":"full","wall_seconds":-1}]}]}`,
		"too large":       `{"schema":1,"services":5,"kernel":"` + string(bytes.Repeat([]byte("x"), MaxSize)) + `"}`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%s: Parse accepted %.80s", name, in)
		}
	}
}

// A file of another schema, or of none (written before bench results were
// versioned), is refused with what it is: the figures are measured again,
// never read with a guessed meaning.
func TestParseRefusesOtherSchemas(t *testing.T) {
	for in, want := range map[string]string{
		`{"services":5}`:              `no "schema" (written by an rke2-proxy-backend older than schema 1)`,
		`{"schema":0,"services":5}`:   `no "schema"`,
		`{"schema":2,"services":5}`:   `schema 2, and this rke2-proxy-backend reads schema 1 only (written by a newer version?)`,
		`{"schema":"1","services":5}`: `not valid JSON`,
		`{"schema":1.5,"services":5}`: `not valid JSON`,
		`{"schema":-1,"services":5}`:  `schema -1`,
	} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
	}
	if rep, err := Parse([]byte(`{"schema":1,"services":5}`)); err != nil || rep.Schema != Schema {
		t.Errorf("schema 1 refused: %+v %v", rep, err)
	}
}
