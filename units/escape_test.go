package units

import (
	"fmt"
	"strings"
	"testing"
)

// systemdExecWords undoes what systemd does to an Exec line, in its order:
// specifiers on the whole line ("%%" -> "%"; any other "%" would expand),
// then word splitting with quotes and C escapes, then "$$" -> "$" per word
// (any other "$" would expand a variable). It fails on anything that systemd
// would expand, so a passing round trip proves no expansion can happen.
func systemdExecWords(line string) ([]string, error) {
	unspec, err := undoSpecifiers(line)
	if err != nil {
		return nil, err
	}
	words, err := splitWords(unspec)
	if err != nil {
		return nil, err
	}
	for i, w := range words {
		if words[i], err = undoDoubled(w, '$', "a variable"); err != nil {
			return nil, err
		}
	}
	return words, nil
}

func undoSpecifiers(s string) (string, error) {
	return undoDoubled(s, '%', "a specifier")
}

// undoDoubled turns every doubled c in s into one c, and fails on a lone c
// (which systemd would expand as what).
func undoDoubled(s string, c byte, what string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			if i+1 < len(s) && s[i+1] == c {
				i++
			} else {
				return "", fmt.Errorf("%q would expand %s", s, what)
			}
		}
		b.WriteByte(s[i])
	}
	return b.String(), nil
}

// splitWords is systemd's extract_first_word with EXTRACT_UNQUOTE|CUNESCAPE
// for the subset of escapes our quoting produces (\\ and \").
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, inQuote := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote && c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("dangling backslash in %q", s)
			}
			i++
			cur.WriteByte(s[i])
		case inQuote && c == '"':
			inQuote = false
		case inQuote:
			cur.WriteByte(c)
		case c == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '"' || c == '\'' || c == '\\':
			if c != '"' {
				return nil, fmt.Errorf("unexpected %q outside quotes in %q", c, s)
			}
			inWord, inQuote = true, true
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inQuote {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

var hostile = []string{
	"plain",
	"with space",
	`double"quote`,
	`single'quote`,
	"percent%n%%",
	"dollar$HOME${PATH}$$",
	`back\slash\`,
	"semi;colon ; rm -rf /",
	"-leading-dash",
	"",
	"ünïcödé",
}

func TestExecLineRoundTrip(t *testing.T) {
	for _, v := range hostile {
		argv := []string{"/usr/bin/rke2-proxy-backend", "apply", v, "--config=" + v}
		line, err := ExecLine(argv)
		if err != nil {
			t.Fatalf("ExecLine(%q): %v", v, err)
		}
		got, err := systemdExecWords(line)
		if err != nil {
			t.Fatalf("value %q rendered as %s: %v", v, line, err)
		}
		if strings.Join(got, "\x00") != strings.Join(argv, "\x00") || len(got) != len(argv) {
			t.Errorf("value %q: systemd would run %q, want %q (line %s)", v, got, argv, line)
		}
	}
}

func TestExecLineRefuses(t *testing.T) {
	for _, argv := range [][]string{
		{"/bin/x", "a\nExecStartPre=/bin/evil"},
		{"/bin/x", "tab\there"},
		{"/bin/x", "cr\r"},
		{"relative/bin"},
		{"-/bin/x"},
		{"/bin/x", "bad\xffutf8"},
		{},
	} {
		if line, err := ExecLine(argv); err == nil {
			t.Errorf("ExecLine(%q) = %q, want an error", argv, line)
		}
	}
}

func TestEnvironmentValueRoundTrip(t *testing.T) {
	for _, v := range hostile {
		got, err := EnvironmentValue("KEY", v)
		if err != nil {
			t.Fatalf("EnvironmentValue(%q): %v", v, err)
		}
		unspec, err := undoSpecifiers(got)
		if err != nil {
			t.Fatal(err)
		}
		words, err := splitWords(unspec)
		if err != nil {
			t.Fatalf("value %q rendered as %s: %v", v, got, err)
		}
		// Environment= takes space-separated assignments: exactly one here.
		if len(words) != 1 || words[0] != "KEY="+v {
			t.Errorf("value %q: systemd would set %q, want one assignment KEY=%s", v, words, v)
		}
	}
	for _, bad := range []struct{ k, v string }{{"KEY", "a\nb"}, {"1KEY", "x"}, {"K Y", "x"}, {"", "x"}, {"K=", "x"}} {
		if got, err := EnvironmentValue(bad.k, bad.v); err == nil {
			t.Errorf("EnvironmentValue(%q, %q) = %q, want an error", bad.k, bad.v, got)
		}
	}
}

func TestValidUnitName(t *testing.T) {
	for name, want := range map[string]bool{
		"rke2-server.service":                 true,
		"rke2-agent.service":                  true,
		"rke2@x.service":                      true,
		"../etc/passwd.service":               false,
		"a/b.service":                         false,
		"rke2-server.socket":                  false,
		".service":                            false,
		"x.service\n[Service]":                false,
		"with space.service":                  false,
		"x..service":                          false,
		strings.Repeat("a", 250) + ".service": false,
	} {
		if got := ValidUnitName(name); got != want {
			t.Errorf("ValidUnitName(%q) = %v, want %v", name, got, want)
		}
	}
}

func FuzzExecLine(f *testing.F) {
	for _, v := range hostile {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		argv := []string{"/usr/bin/x", v}
		line, err := ExecLine(argv)
		if err != nil {
			return
		}
		if strings.ContainsAny(line, "\n\r") {
			t.Fatalf("line %q holds a line break", line)
		}
		got, err := systemdExecWords(line)
		if err != nil {
			t.Fatalf("value %q rendered as %s: %v", v, line, err)
		}
		if len(got) != 2 || got[1] != v {
			t.Fatalf("value %q: systemd would run %q", v, got)
		}
	})
}
