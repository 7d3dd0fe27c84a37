package vocab

import (
	"strings"
	"testing"
)

func TestSplitArgs(t *testing.T) {
	got := SplitArgs(`-m comment --comment "a \"b\" \\c" -j  X ""`)
	want := []string{"-m", "comment", "--comment", `a "b" \c`, "-j", "X", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("SplitArgs = %q, want %q", got, want)
	}
}

func TestQuoteIptables(t *testing.T) {
	for in, want := range map[string]string{
		"KUBE-SVC_1":                 "KUBE-SVC_1",
		"ns1/svc1:p80":               `"ns1/svc1:p80"`,
		"kubernetes service portals": `"kubernetes service portals"`,
		"":                           `""`,
		`a"b\c'd`:                    `"a\"b\\c\'d"`,
	} {
		got := Quote(in)
		if got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
		if back := SplitArgs("--comment " + got); len(back) != 2 || back[1] != in {
			t.Errorf("SplitArgs does not undo Quote(%q): %q", in, back)
		}
	}
}

func FuzzQuoteIptables(f *testing.F) {
	f.Add("ns1/svc1:p80")
	f.Add(`a"b\c'd`)
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			return // iptables arguments are C strings; a newline is fine
		}
		if back := SplitArgs("-x " + Quote(s)); len(back) != 2 || back[1] != s {
			t.Fatalf("SplitArgs(Quote(%q)) = %q", s, back)
		}
	})
}
