package facts

import (
	"strings"
	"testing"
)

// FuzzParseUnitLines checks the lines parseUnit gives Environment= and
// EnvironmentFile= values (they name the operator's line in reasons and
// errors): one per value, in order, each a line of the input that starts
// with the key, and a reset flag exactly when an empty assignment was read.
func FuzzParseUnitLines(f *testing.F) {
	for _, s := range []string{
		"[Service]\nEnvironment=IPTABLES_MODE=legacy\n",
		"[Service]\nEnvironment=\"A=b c\" \\\n  \"IPTABLES_MODE=nft\"\nEnvironment=\nEnvironmentFile=-/etc/default/%N\n",
		"[Unit]\nEnvironment=X=1\n[Service]\n \\\nEnvironment=Y=2\n# Environment=Z=3\r\nEnvironmentFile=\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		u := parseUnit(text)
		if len(u.env) != len(u.envLine) || len(u.envFiles) != len(u.envFileLine) {
			t.Fatalf("%d env values, %d lines; %d files, %d lines", len(u.env), len(u.envLine), len(u.envFiles), len(u.envFileLine))
		}
		lines := strings.Split(text, "\n")
		check := func(key string, at []int) {
			prev := 0
			for _, n := range at {
				if n < 1 || n > len(lines) || n < prev {
					t.Fatalf("%s line %d out of order or range (%d lines, previous %d)", key, n, len(lines), prev)
				}
				if l := strings.TrimSpace(lines[n-1]); !strings.HasPrefix(l, key) {
					t.Fatalf("%s value placed on line %d, %q", key, n, l)
				}
				prev = n
			}
		}
		check("Environment", u.envLine)
		check("EnvironmentFile", u.envFileLine)
	})
}
