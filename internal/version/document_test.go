package version

import (
	"encoding/json"
	"testing"
)

// The JSON document's keys are a contract for scripts; the text is one line.
func TestCurrentDocument(t *testing.T) {
	d := Current()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"schema":1,"name":"rke2-proxy-backend","version":"` + Version + `"}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	if want := "rke2-proxy-backend " + Version + "\n"; d.Text() != want {
		t.Errorf("text %q, want %q", d.Text(), want)
	}
}
