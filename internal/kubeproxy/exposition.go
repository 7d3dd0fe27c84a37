package kubeproxy

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Sample is one line of a Prometheus text exposition: a metric name, its
// labels and its value (a timestamp after the value is read and dropped).
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// maxExpositionLine bounds one line; kube-proxy's longest are a few hundred
// bytes, and the whole page is bounded by MetricsMaxBody.
const maxExpositionLine = 64 << 10

// ParseExposition reads the samples whose name keep accepts from a
// Prometheus text exposition (format 0.0.4, what kube-proxy's /metrics
// serves). Comments and blank lines are skipped; a malformed line is an
// error naming its line number, because a page that breaks the format is
// not kube-proxy's and none of its figures can be trusted.
func ParseExposition(page []byte, keep func(name string) bool) ([]Sample, error) {
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(make([]byte, 0, 4096), maxExpositionLine)
	var out []Sample
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSampleLine(line, keep)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %w", n, clip(line, 80), err)
		}
		if s != nil {
			out = append(out, *s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading the exposition: %w", err)
	}
	return out, nil
}

// parseSampleLine parses `name{l="v",...} value [timestamp]`. It returns
// nil, nil for a well-formed name keep does not want, without reading on.
func parseSampleLine(line string, keep func(string) bool) (*Sample, error) {
	i := 0
	for i < len(line) && isNameChar(line[i], i == 0) {
		i++
	}
	if i == 0 {
		return nil, fmt.Errorf("no metric name")
	}
	s := Sample{Name: line[:i]}
	if !keep(s.Name) {
		return nil, nil
	}
	rest := line[i:]
	if strings.HasPrefix(rest, "{") {
		labels, after, err := parseLabels(rest[1:])
		if err != nil {
			return nil, err
		}
		s.Labels, rest = labels, after
	}
	fields := strings.Fields(rest)
	if len(fields) < 1 || len(fields) > 2 || (rest != "" && rest[0] != ' ' && rest[0] != '\t') {
		return nil, fmt.Errorf("want a value (and optionally a timestamp) after the name and labels")
	}
	v, err := parseExpositionFloat(fields[0])
	if err != nil {
		return nil, err
	}
	if len(fields) == 2 {
		if _, err := strconv.ParseInt(fields[1], 10, 64); err != nil {
			return nil, fmt.Errorf("timestamp %q: %w", fields[1], err)
		}
	}
	s.Value = v
	return &s, nil
}

// parseLabels reads `name="value",...}` (the opening brace already eaten)
// and returns the labels and what follows the closing brace.
func parseLabels(in string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		in = strings.TrimLeft(in, " \t")
		if strings.HasPrefix(in, "}") {
			return labels, in[1:], nil
		}
		j := 0
		for j < len(in) && isNameChar(in[j], j == 0) && in[j] != ':' {
			j++
		}
		if j == 0 {
			return nil, "", fmt.Errorf("bad label name at %q", clip(in, 20))
		}
		name := in[:j]
		// The format allows blanks around the = (expfmt reads them).
		in = strings.TrimLeft(in[j:], " \t")
		eq := strings.HasPrefix(in, "=")
		if eq {
			in = strings.TrimLeft(in[1:], " \t")
		}
		if !eq || !strings.HasPrefix(in, `"`) {
			return nil, "", fmt.Errorf("label %s: want =\"value\"", name)
		}
		value, after, err := unquoteLabel(in[1:])
		if err != nil {
			return nil, "", fmt.Errorf("label %s: %w", name, err)
		}
		if _, dup := labels[name]; dup {
			return nil, "", fmt.Errorf("label %s twice", name)
		}
		labels[name] = value
		in = strings.TrimLeft(after, " \t")
		switch {
		case strings.HasPrefix(in, ","):
			in = in[1:]
		case strings.HasPrefix(in, "}"):
		default:
			return nil, "", fmt.Errorf("after label %s: want , or }", name)
		}
	}
}

// unquoteLabel reads a label value up to its closing quote; the format
// escapes only backslash, double quote and newline.
func unquoteLabel(in string) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(in); i++ {
		switch c := in[i]; c {
		case '"':
			return b.String(), in[i+1:], nil
		case '\\':
			if i+1 == len(in) {
				return "", "", fmt.Errorf("value ends in a backslash")
			}
			i++
			switch in[i] {
			case '\\':
				b.WriteByte('\\')
			case '"':
				b.WriteByte('"')
			case 'n':
				b.WriteByte('\n')
			default:
				return "", "", fmt.Errorf("unknown escape \\%c", in[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", fmt.Errorf("value has no closing quote")
}

// parseExpositionFloat reads a Sample value: Go floats plus the format's
// +Inf, -Inf and NaN spellings.
func parseExpositionFloat(s string) (float64, error) {
	switch s {
	case "+Inf", "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("value %q is not a number", s)
	}
	return v, nil
}

func isNameChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
