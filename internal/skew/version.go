package skew

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is an nft or iptables release number: 1 to 4 dotted parts
// ("1.0.6.1" is a real nftables release), each 0-9999. Missing trailing
// parts count as 0 when compared, so 1.1 == 1.1.0.
type Version struct {
	parts [4]int
	n     int // parts given, for String
}

// maxPart bounds each part: release numbers are small, and a bound keeps
// a hostile version string from overflowing.
const maxPart = 9999

// ParseVersion reads "1.0.6.1" or "v1.1.3". Anything else is an error that
// quotes the value: a data file row or a tool's output that does not look
// like a release number must not silently compare as 0.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(s, "v")
	fields := strings.Split(t, ".")
	if t == "" || len(fields) > len(Version{}.parts) {
		return Version{}, fmt.Errorf("version %q: want 1 to 4 dotted numbers, e.g. 1.0.6.1", s)
	}
	var v Version
	for i, f := range fields {
		if f == "" || len(f) > 4 || strings.TrimLeft(f, "0123456789") != "" || (len(f) > 1 && f[0] == '0') {
			return Version{}, fmt.Errorf("version %q: part %q is not a number 0-%d without leading zeros", s, f, maxPart)
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return Version{}, fmt.Errorf("version %q: %w", s, err)
		}
		v.parts[i] = n
	}
	v.n = len(fields)
	return v, nil
}

// MustVersion is ParseVersion for constants in tests and tables.
func MustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// Known reports whether v was parsed (the zero Version is "unknown").
func (v Version) Known() bool { return v.n > 0 }

// String gives the parts as they were given: "1.0.6.1", "1.1".
func (v Version) String() string {
	if !v.Known() {
		return "unknown"
	}
	s := make([]string, v.n)
	for i := range v.n {
		s[i] = strconv.Itoa(v.parts[i])
	}
	return strings.Join(s, ".")
}

// Compare returns -1, 0 or 1 as v is older than, the same as or newer than w.
func (v Version) Compare(w Version) int {
	for i := range v.parts {
		switch {
		case v.parts[i] < w.parts[i]:
			return -1
		case v.parts[i] > w.parts[i]:
			return 1
		}
	}
	return 0
}

// Range is an inclusive range of versions; a zero end is open.
type Range struct {
	From, To Version
}

// ParseRange reads "1.0.1-1.0.5", "1.1.2-" (and later), "-1.1.1" (and
// earlier) or "1.0.6.1" (that one release).
func ParseRange(s string) (Range, error) {
	from, to, dash := strings.Cut(s, "-")
	if !dash {
		v, err := ParseVersion(s)
		return Range{From: v, To: v}, err
	}
	if from == "" && to == "" {
		return Range{}, fmt.Errorf("range %q: give at least one end, e.g. 1.1.2- or -1.1.1", s)
	}
	var r Range
	var err error
	if from != "" {
		if r.From, err = ParseVersion(from); err != nil {
			return Range{}, fmt.Errorf("range %q: %w", s, err)
		}
	}
	if to != "" {
		if r.To, err = ParseVersion(to); err != nil {
			return Range{}, fmt.Errorf("range %q: %w", s, err)
		}
	}
	if r.From.Known() && r.To.Known() && r.From.Compare(r.To) > 0 {
		return Range{}, fmt.Errorf("range %q: %s is after %s", s, r.From, r.To)
	}
	return r, nil
}

// Contains reports whether v is in r; an unknown v is in no range.
func (r Range) Contains(v Version) bool {
	if !v.Known() {
		return false
	}
	if r.From.Known() && v.Compare(r.From) < 0 {
		return false
	}
	return !r.To.Known() || v.Compare(r.To) <= 0
}

// String writes r back as ParseRange reads it.
func (r Range) String() string {
	switch {
	case r.From.Known() && r.To.Known() && r.From == r.To:
		return r.From.String()
	case !r.From.Known():
		return "-" + r.To.String()
	case !r.To.Known():
		return r.From.String() + "-"
	}
	return r.From.String() + "-" + r.To.String()
}

// Words says the range in a sentence: "1.0.1 to 1.0.5", "1.1.2 or later".
func (r Range) Words() string {
	switch {
	case r.From.Known() && r.To.Known() && r.From == r.To:
		return r.From.String()
	case !r.From.Known():
		return r.To.String() + " or older"
	case !r.To.Known():
		return r.From.String() + " or later"
	}
	return r.From.String() + " to " + r.To.String()
}

// Ranges is a union of ranges, written comma-separated.
type Ranges []Range

// ParseRanges reads "-1.33.10,1.34.0-1.34.6"; "*" is every version.
func ParseRanges(s string) (Ranges, error) {
	if s == "*" {
		return Ranges{{}}, nil
	}
	var out Ranges
	for _, f := range strings.Split(s, ",") {
		r, err := ParseRange(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Contains reports whether any range holds v. The "*" union holds every
// version, an unknown one included: a rule for every kube-proxy applies
// even when the Kubernetes version is unknown.
func (rs Ranges) Contains(v Version) bool {
	for _, r := range rs {
		if !r.From.Known() && !r.To.Known() {
			return true
		}
		if r.Contains(v) {
			return true
		}
	}
	return false
}

func (rs Ranges) String() string {
	if len(rs) == 1 && !rs[0].From.Known() && !rs[0].To.Known() {
		return "*"
	}
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, ",")
}
