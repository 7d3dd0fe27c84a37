package facts

import (
	"regexp"
	"strconv"
	"testing"
)

// FuzzParseRelease checks the hand-written parser against the regexp it
// replaced: same matches, same numbers.
func FuzzParseRelease(f *testing.F) {
	oracle := regexp.MustCompile(`^([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,6}))?`)
	for _, s := range []string{"6.1.0-18-amd64", "4.4.302+", "5.14.0-427.el9.x86_64", "12345.1", "6.1.1234567", "6.", "6.1.x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ma, mi, pa, ok := ParseRelease(s)
		m := oracle.FindStringSubmatch(s)
		if (m != nil) != ok {
			t.Fatalf("ParseRelease(%q) ok=%v, regexp %q", s, ok, m)
		}
		if m == nil {
			return
		}
		wa, _ := strconv.Atoi(m[1])
		wi, _ := strconv.Atoi(m[2])
		wp := 0
		if m[3] != "" {
			wp, _ = strconv.Atoi(m[3])
		}
		if ma != wa || mi != wi || pa != wp {
			t.Fatalf("ParseRelease(%q) = %d.%d.%d, regexp %q", s, ma, mi, pa, m)
		}
	})
}
