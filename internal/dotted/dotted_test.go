package dotted

import (
	"regexp"
	"strconv"
	"testing"
)

func TestPrefix(t *testing.T) {
	type want struct {
		major, minor, patch int
		rest                string
		ok                  bool
	}
	for in, w := range map[string]want{
		"6.1.0-18-amd64":        {6, 1, 0, "-18-amd64", true},
		"5.14.0-427.el9.x86_64": {5, 14, 0, "-427.el9.x86_64", true},
		"4.4.302+":              {4, 4, 302, "+", true},
		"1.31":                  {1, 31, -1, "", true},
		"1.31.":                 {1, 31, -1, ".", true},
		"1.31.x":                {1, 31, -1, ".x", true},
		"1.31.1234567":          {1, 31, 123456, "7", true},
		"1.23456":               {1, 2345, -1, "6", true},
		"12345.1":               {0, 0, -1, "12345.1", false},
		"1":                     {0, 0, -1, "1", false},
		"1.":                    {0, 0, -1, "1.", false},
		".1":                    {0, 0, -1, ".1", false},
		"":                      {0, 0, -1, "", false},
	} {
		ma, mi, pa, rest, ok := Prefix(in)
		if got := (want{ma, mi, pa, rest, ok}); got != w {
			t.Errorf("Prefix(%q) = %+v, want %+v", in, got, w)
		}
	}
}

// FuzzPrefix checks the hand-written reader against the regexp it replaces.
func FuzzPrefix(f *testing.F) {
	re := regexp.MustCompile(`^(\d{1,4})\.(\d{1,4})(?:\.(\d{1,6}))?`)
	for _, s := range []string{"6.1.0-18-amd64", "1.31", "1.31.", "12345.1", "0.0.0000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ma, mi, pa, rest, ok := Prefix(s)
		m := re.FindStringSubmatch(s)
		if ok != (m != nil) {
			t.Fatalf("Prefix(%q) ok=%v, regexp %q", s, ok, m)
		}
		if !ok {
			return
		}
		num := func(d string) int {
			if d == "" {
				return -1
			}
			n, _ := strconv.Atoi(d)
			return n
		}
		if ma != num(m[1]) || mi != num(m[2]) || pa != num(m[3]) || rest != s[len(m[0]):] {
			t.Fatalf("Prefix(%q) = %d.%d.%d rest %q, regexp %q", s, ma, mi, pa, rest, m)
		}
	})
}
