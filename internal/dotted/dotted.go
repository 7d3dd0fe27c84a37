// Package dotted reads the MAJOR.MINOR[.PATCH] numbers off the front of a
// version string. Kernel releases ("6.1.0-18-amd64") and RKE2 versions
// ("v1.31.2+rke2r1", after the "v") both start that way; each caller decides
// what may follow. Hand-written rather than a regexp: the generator parses
// both at every boot, and compiling a regexp at start-up cost more than the
// parse.
package dotted

// Prefix reads major.minor (1-4 digits each) and an optional .patch (1-6
// digits) off the front of s. Patch is -1 when no digit follows a second
// dot; rest is what follows the last number read (a lone "." with no digit
// after it stays in rest). ok is false when s does not start with
// major.minor.
func Prefix(s string) (major, minor, patch int, rest string, ok bool) {
	major, rest, ok = leadingNumber(s, 4)
	if !ok || len(rest) == 0 || rest[0] != '.' {
		return 0, 0, -1, s, false
	}
	minor, rest, ok = leadingNumber(rest[1:], 4)
	if !ok {
		return 0, 0, -1, s, false
	}
	patch = -1
	if len(rest) > 0 && rest[0] == '.' {
		if p, after, ok := leadingNumber(rest[1:], 6); ok {
			patch, rest = p, after
		}
	}
	return major, minor, patch, rest, true
}

// leadingNumber reads 1 to max decimal digits off the front of s.
func leadingNumber(s string, max int) (n int, rest string, ok bool) {
	i := 0
	for i < len(s) && i < max && s[i] >= '0' && s[i] <= '9' {
		n = n*10 + int(s[i]-'0')
		i++
	}
	return n, s[i:], i > 0
}
