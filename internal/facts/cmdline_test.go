package facts

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
)

func TestParseCmdline(t *testing.T) {
	for in, want := range map[string][]string{
		"BOOT_IMAGE=/vmlinuz root=UUID=1 ro quiet\n":        {"BOOT_IMAGE=/vmlinuz", "root=UUID=1", "ro", "quiet"},
		`rke2.proxy_backend=iptables-legacy  a="b c" 'd e'`: {"rke2.proxy_backend=iptables-legacy", "a=b c", "d e"},
		`x="unterminated quote`:                             {"x=unterminated quote"},
		`"" '' e`:                                           {"e"},
		"":                                                  {},
		"\t \n":                                             {},
	} {
		if got := ParseCmdline(in); !reflect.DeepEqual(got, want) {
			t.Errorf("ParseCmdline(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseCmdline(f *testing.F) {
	f.Add("root=/dev/sda1 ro rke2.proxy_backend=auto")
	f.Add(`a="b c" 'd' "e`)
	f.Add("\x00\xff\t")
	f.Fuzz(func(t *testing.T, s string) {
		words := ParseCmdline(s)
		for _, w := range words {
			if w == "" {
				t.Fatal("empty word")
			}
		}
		// Without quotes, the words are exactly the whitespace-separated fields.
		if !strings.ContainsAny(s, `"'`) && !strings.ContainsRune(s, 0) {
			fields := strings.FieldsFunc(s, unicode.IsSpace)
			if len(fields) == 0 {
				fields = []string{}
			}
			if !reflect.DeepEqual(words, fields) {
				t.Fatalf("ParseCmdline(%q) = %q, want %q", s, words, fields)
			}
		}
	})
}
