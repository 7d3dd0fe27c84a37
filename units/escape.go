package units

import (
	"fmt"
	"strings"
	"unicode"
)

// render (generated.go) writes values exactly as given, so every value
// that reaches a unit file goes through one of these first. systemd applies
// "%" specifiers to nearly every setting, "$" substitution to Exec lines only,
// and C-style unquoting (with "\" escapes) to Exec lines and Environment=.
// A control character (newline above all) cannot be carried safely: a
// newline would end the setting and start a new directive, so it is refused.

// checkPrintable refuses values systemd cannot hold on one line.
func checkPrintable(what, v string) error {
	for _, r := range v {
		if r == unicode.ReplacementChar || unicode.IsControl(r) {
			return fmt.Errorf("%s %q contains a control character (newline, tab, ...) that a systemd unit file cannot hold; remove it", what, v)
		}
	}
	return nil
}

// plainWord reports whether s needs no quoting on an Exec line or in
// Environment=: only characters that systemd treats literally.
func plainWord(s string) bool {
	if s == "" {
		return false
	}
	return onlyAlnumOr(s, "/_.,:=+@-")
}

// onlyAlnumOr reports whether s holds only ASCII letters, digits and the
// runes in extra.
func onlyAlnumOr(s, extra string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune(extra, r):
		default:
			return false
		}
	}
	return true
}

// quote wraps s in double quotes with "\" and `"` escaped, the quoting
// systemd's extract_first_word undoes for Exec lines and Environment=.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r == '\\' || r == '"' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// escapeSpecifiers doubles "%" so systemd does not expand it as a specifier.
func escapeSpecifiers(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// ExecLine renders argv as the value of an Exec*= setting: each word quoted
// when it holds anything but plain characters, "%" and "$" doubled so that
// neither specifiers nor environment variables are expanded. The program
// must be an absolute path so no Exec prefix ("-", "@", "+", "!", ":") can be
// smuggled in front of it.
func ExecLine(argv []string) (string, error) {
	if len(argv) == 0 {
		return "", fmt.Errorf("empty command line")
	}
	if !strings.HasPrefix(argv[0], "/") {
		return "", fmt.Errorf("program %q is not an absolute path; systemd needs one", argv[0])
	}
	words := make([]string, len(argv))
	for i, a := range argv {
		if err := checkPrintable("command-line argument", a); err != nil {
			return "", err
		}
		w := a
		if !plainWord(w) {
			w = quote(w)
		}
		words[i] = strings.ReplaceAll(escapeSpecifiers(w), "$", "$$")
	}
	return strings.Join(words, " "), nil
}

// EnvironmentValue renders one KEY=VALUE assignment for Environment=. The key
// must be a plain variable name; the value may hold anything printable.
func EnvironmentValue(key, value string) (string, error) {
	if !validEnvName(key) {
		return "", fmt.Errorf("environment variable name %q is not valid: use letters, digits and _", key)
	}
	if err := checkPrintable("value of "+key, value); err != nil {
		return "", err
	}
	a := key + "=" + value
	if !plainWord(a) {
		a = quote(a)
	}
	return escapeSpecifiers(a), nil
}

func validEnvName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// ValidUnitName reports whether name is a plain service unit name we may
// create a drop-in directory for: no path separators, no "..", only the
// characters systemd allows in unit names.
func ValidUnitName(name string) bool {
	if !strings.HasSuffix(name, ".service") || len(name) > 255 || strings.HasPrefix(name, ".") {
		return false
	}
	return onlyAlnumOr(name, ":-_.\\@") && !strings.Contains(name, "..")
}
