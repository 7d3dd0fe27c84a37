package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Duration is a config duration that JSON carries as an operator writes it
// ("5m", "1h30m", "0s"), not as a count of nanoseconds.
type Duration time.Duration

// String is time.Duration's without the zero units it pads with ("5m",
// not "5m0s"; "1m30s" stays), still readable by time.ParseDuration.
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

func (d *Duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"5m\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}
