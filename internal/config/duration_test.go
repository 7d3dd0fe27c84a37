package config

import (
	"encoding/json"
	"testing"
	"time"
)

// A duration marshals as an operator writes it and reads back the same.
func TestDurationJSON(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                          "0s",
		30 * time.Second:           "30s",
		90 * time.Second:           "1m30s",
		5 * time.Minute:            "5m",
		10 * time.Minute:           "10m",
		time.Hour:                  "1h",
		time.Hour + 30*time.Minute: "1h30m",
		24 * time.Hour:             "24h",
		1500 * time.Millisecond:    "1.5s",
		time.Hour + 30*time.Second: "1h0m30s",
	} {
		data, err := json.Marshal(Duration(d))
		if err != nil || string(data) != `"`+want+`"` {
			t.Errorf("%v marshals as %s (%v), want %q", d, data, err, want)
		}
		var back Duration
		if err := json.Unmarshal(data, &back); err != nil || back != Duration(d) {
			t.Errorf("%s reads back as %v (%v), want %v", data, back, err, d)
		}
	}
	var d Duration
	for _, bad := range []string{`300000000000`, `"5 minutes"`, `null`} {
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s read as %v", bad, d)
		}
	}
}

// Every Duration, and whatever JSON reads as one, marshals to a string
// that reads back as the same Duration.
func FuzzDurationJSON(f *testing.F) {
	f.Add(`"5m"`, int64(0))
	f.Add(`"1h0m30s"`, int64(90*time.Second))
	f.Add(`"-1.5h"`, int64(-1))
	f.Add(`"0.000000001s"`, int64(1<<62))
	f.Fuzz(func(t *testing.T, in string, n int64) {
		roundTrip(t, Duration(n))
		var d Duration
		if json.Unmarshal([]byte(in), &d) == nil {
			roundTrip(t, d)
		}
	})
}

func roundTrip(t *testing.T, d Duration) {
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back Duration
	if err := json.Unmarshal(data, &back); err != nil || back != d {
		t.Fatalf("%v marshals as %s, which reads back as %v (%v)", d, data, back, err)
	}
}
