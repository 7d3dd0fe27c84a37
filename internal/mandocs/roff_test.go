package mandocs

import (
	"strings"
	"testing"
)

func TestEscape(t *testing.T) {
	for in, want := range map[string]string{
		"<RKE2 config>.d/x":  "<RKE2 config>.d/x",
		"--wait":             `\-\-wait`,
		`C:\path`:            `C:\epath`,
		".d is a line":       `\&.d is a line`,
		"a\n.TH x\n'br":      "a\n\\&.TH x\n\\&'br",
		`\fBbold\fR`:         `\efBbold\efR`,
		"kube-proxy's rules": `kube\-proxy's rules`,
		"*bold* _under_ `c`": "*bold* _under_ `c`",
	} {
		if got := escape(in); got != want {
			t.Errorf("escape(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestProse(t *testing.T) {
	var r roff
	r.prose("first line\nsecond line\n\nlist:\n  a   one\n    b two\nafter\n")
	want := `.PP
first line
second line
.PP
list:
.PP
.RS 4
.nf
a   one
  b two
.fi
.RE
.PP
after
`
	if got := r.String(); got != want {
		t.Errorf("prose:\n%s\nwant:\n%s", got, want)
	}
}

// requests are the only lines prose may start with "." or "'".
var requests = map[string]bool{".PP": true, ".RS 4": true, ".nf": true, ".fi": true, ".RE": true}

// unescape undoes escape for the checks below, left to right.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'e':
				b.WriteByte('\\')
			case '-':
				b.WriteByte('-')
			case '&':
			default:
				b.WriteString(s[i : i+2])
			}
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzProse: whatever the help text, prose emits only its own requests,
// every other line is text (no request, no escape but its own), and the
// words come out as they went in.
func FuzzProse(f *testing.F) {
	f.Add("writes <RKE2 config>.d/60-proxy-backend.yaml\n\n  indented\n.TH trap\n'also\\n")
	f.Add("\\fB\\-\\e\n\n\n  \n\t tab\n")
	f.Fuzz(func(t *testing.T, text string) {
		var r roff
		r.prose(text)
		var words []string
		for _, l := range strings.Split(strings.TrimSuffix(r.String(), "\n"), "\n") {
			if requests[l] {
				continue
			}
			if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
				t.Fatalf("text line read as a request: %q\nfrom %q", l, text)
			}
			for i := 0; i < len(l); i++ {
				if l[i] == '\\' {
					if i+1 >= len(l) || !strings.ContainsRune(`e-&`, rune(l[i+1])) {
						t.Fatalf("stray escape in %q\nfrom %q", l, text)
					}
					i++
				}
			}
			words = append(words, strings.Fields(unescape(l))...)
		}
		if got, want := strings.Join(words, " "), strings.Join(strings.Fields(text), " "); got != want {
			t.Fatalf("words changed:\n got %q\nwant %q", got, want)
		}
	})
}
