package kpargs

import (
	"fmt"
	"strconv"
	"strings"
)

// Gate is one name=bool pair of a --feature-gates value.
type Gate struct {
	Name  string
	Value bool
	// Text is the pair as written (spaces trimmed), for "remove X" advice.
	Text string
}

// ParseGates reads a --feature-gates value as kube-proxy's flag does
// (component-base cli/flag MapStringBool.Set): pairs split at ",", empty
// pairs skipped, each split at the first "=", name and value trimmed of
// spaces, the value a strconv.ParseBool boolean. Names are kept as
// written: kube-proxy's gates are case-sensitive. An error is what makes
// kube-proxy refuse the flag itself.
func ParseGates(value string) ([]Gate, error) {
	var gates []Gate
	for _, pair := range strings.Split(value, ",") {
		if pair == "" {
			continue
		}
		name, v, ok := strings.Cut(pair, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not name=true|false", pair)
		}
		name, v = strings.TrimSpace(name), strings.TrimSpace(v)
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("%q: %q is not a boolean (true or false)", pair, v)
		}
		gates = append(gates, Gate{Name: name, Value: b, Text: strings.TrimSpace(pair)})
	}
	return gates, nil
}

// FormatGates writes gates back as a --feature-gates value, canonically
// (name=true|false, comma-separated, in order).
func FormatGates(gates []Gate) string {
	parts := make([]string, len(gates))
	for i, g := range gates {
		parts[i] = g.Name + "=" + strconv.FormatBool(g.Value)
	}
	return strings.Join(parts, ",")
}
