package switchover

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestSetBackendKeepsEverythingElse(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain with comments",
			"# operator notes\nbackend: iptables-legacy # NAS kernel\nprefer: [nftables]\n",
			"# operator notes\nbackend: iptables-nft # NAS kernel\nprefer: [nftables]\n"},
		{"double quoted", "verify:\n  wait: 2m\nbackend: \"auto\"\n", "verify:\n  wait: 2m\nbackend: iptables-nft\n"},
		{"single quoted, CRLF", "backend: 'off'\r\nnode_label: true\r\n", "backend: iptables-nft\r\nnode_label: true\r\n"},
		{"missing key appended", "node_label: true", "node_label: true\nbackend: iptables-nft\n"},
		{"empty file", "", "backend: iptables-nft\n"},
		{"only comments", "# nothing yet\n", "# nothing yet\nbackend: iptables-nft\n"},
		{"nested backend key untouched",
			"kube_proxy:\n  extra_args: [\"backend=x\"]\nbackend: nftables\n",
			"kube_proxy:\n  extra_args: [\"backend=x\"]\nbackend: iptables-nft\n"},
		{"backend in a block scalar is not the key",
			"note: |\n  backend: nftables\nbackend: auto\n",
			"note: |\n  backend: nftables\nbackend: iptables-nft\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := SetBackend([]byte(c.in), "iptables-nft")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

func TestSetBackendRefusesWhatItCannotEditInPlace(t *testing.T) {
	cases := map[string]string{
		"flow map":     "{backend: auto}\n",
		"list":         "- backend\n",
		"block scalar": "backend: |\n  auto\n",
		"map value":    "backend:\n  name: auto\n",
		"twice":        "backend: auto\nbackend: off\n",
		"no value":     "backend:\n",
		"bad yaml":     "backend: [\n",
		"anchor":       "backend: &b auto\n",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if out, err := SetBackend([]byte(in), "nftables"); err == nil {
				t.Fatalf("no error; got %q", out)
			}
		})
	}
	if _, err := SetBackend(nil, "bad value"); err == nil {
		t.Fatal("a value with a space was accepted")
	}
}

// FuzzSetBackend: whatever the file, an edit either fails or yields YAML
// whose top-level backend is the new value and whose other lines are the
// old ones.
func FuzzSetBackend(f *testing.F) {
	for _, s := range []string{"", "backend: auto\n", "# c\nbackend: \"off\" # x\nprefer: [a]\n", "a: 1", "backend: 'x'\r\n", "backend: |\n  x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := SetBackend([]byte(in), "nftables")
		var before map[string]any
		if err != nil || yaml.Unmarshal([]byte(in), &before) != nil {
			return // duplicate keys and the like: config.Load refuses those anyway
		}
		var m map[string]any
		if err := yaml.Unmarshal(out, &m); err != nil {
			t.Fatalf("edit of %q is not YAML: %v\n%q", in, err, out)
		}
		if m["backend"] != "nftables" {
			t.Fatalf("edit of %q: backend is %v\n%q", in, m["backend"], out)
		}
		inLines, outLines := strings.Split(in, "\n"), strings.Split(string(out), "\n")
		changed := 0
		for i := range min(len(inLines), len(outLines)) {
			if inLines[i] != outLines[i] {
				changed++
			}
		}
		if changed > 1 {
			t.Fatalf("edit of %q changed %d lines:\n%q", in, changed, out)
		}
	})
}
