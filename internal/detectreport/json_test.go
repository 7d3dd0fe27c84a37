package detectreport

import (
	"testing"
	"time"
)

func TestDurationText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                          "0s",
		90 * time.Second:           "1m30s",
		5 * time.Minute:            "5m",
		time.Hour:                  "1h",
		time.Hour + 30*time.Minute: "1h30m",
		24 * time.Hour:             "24h",
		1500 * time.Millisecond:    "1.5s",
		time.Hour + 30*time.Second: "1h0m30s",
	} {
		if got := durationText(d); got != want {
			t.Errorf("durationText(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(durationText(d)); err != nil || back != d {
			t.Errorf("durationText(%v) = %q does not parse back: %v, %v", d, durationText(d), back, err)
		}
	}
}
