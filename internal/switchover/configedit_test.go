package switchover

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"

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

// FuzzSetBackend: whatever the file, an edit either fails or changes only
// backend's value (or appends the key to a file without one), within one
// line, so that the new file says backend: nftables and every other setting
// as before; a byte order mark in front changes nothing but itself; setting
// the old plain value again gives the original bytes back; and the switch's
// own Snapshot, Set and Restore leave the file byte for byte as it was.
func FuzzSetBackend(f *testing.F) {
	for _, s := range []string{"", "backend: auto\n", "# c\nbackend: \"off\" # x\nprefer: [a]\n", "a: 1", "backend: 'x'\r\n", "backend: |\n  x\n",
		"\ufeffbackend: iptables-legacy\nverify:\n  wait: 3m\n", "\ufeff# c\r\nbackend: nftables\r\n", "\ufeff", "\ufeff\ufeffbackend: x\n", "\xff\xfeb\x00"} {
		f.Add(s)
	}
	root := hostfs.New(f.TempDir())
	f.Fuzz(func(t *testing.T, in string) {
		out, err := SetBackend([]byte(in), "nftables")
		if !strings.HasPrefix(in, "\ufeff") {
			bomOut, bomErr := SetBackend([]byte("\ufeff"+in), "nftables")
			if (err == nil) != (bomErr == nil) || err == nil && string(bomOut) != "\ufeff"+string(out) {
				t.Fatalf("a byte order mark changed the edit of %q: %q, %v; with the mark %q, %v", in, out, err, bomOut, bomErr)
			}
		}
		if err != nil {
			return
		}
		var before, after map[string]any
		if err := yaml.Unmarshal([]byte(in), &before); err != nil {
			t.Fatalf("edited %q, which is not YAML: %v", in, err)
		}
		if err := yaml.Unmarshal(out, &after); err != nil {
			t.Fatalf("edit of %q is not YAML: %v\n%q", in, err, out)
		}
		if after["backend"] != "nftables" {
			t.Fatalf("edit of %q: backend is %v\n%q", in, after["backend"], out)
		}
		old, hadKey := before["backend"]
		delete(before, "backend")
		delete(after, "backend")
		if len(before)+len(after) > 0 && !reflect.DeepEqual(before, after) {
			t.Fatalf("edit of %q changed other settings: %v -> %v", in, before, after)
		}
		// What changed: the bytes between the common prefix and suffix.
		p := 0
		for p < len(in) && p < len(out) && in[p] == out[p] {
			p++
		}
		s := 0
		for s < len(in)-p && s < len(out)-p && in[len(in)-1-s] == out[len(out)-1-s] {
			s++
		}
		was, now := in[p:len(in)-s], string(out[p:len(out)-s])
		if hadKey {
			if strings.ContainsAny(was+now, "\r\n") {
				t.Fatalf("edit of %q changed more than backend's value: %q became %q", in, was, now)
			}
		} else if p != len(in) || !regexp.MustCompile(`^\n?[ ]*backend: nftables\n$`).MatchString(string(out[len(in):])) {
			t.Fatalf("edit of %q, which has no backend, did more than append it: %q", in, out)
		}
		if w, ok := old.(string); ok && regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w) && strings.Contains(in, "backend: "+w) {
			if back, err := SetBackend(out, w); err != nil || string(back) != in {
				t.Fatalf("setting backend %s again in %q gave %q (%v), not the original %q", w, out, back, err, in)
			}
		}
		c := FileConfig{Root: root, File: hostfs.ConfigFile}
		if _, err := root.WriteFileAtomic(hostfs.ConfigFile, []byte(in), 0o640); err != nil {
			t.Fatal(err)
		}
		snap, err := c.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Set(snap, backend.NFTables); err != nil {
			t.Fatal(err)
		}
		if err := c.Restore(snap); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(root.Path(hostfs.ConfigFile)); string(got) != in {
			t.Fatalf("Set then Restore left %q, not the original %q", got, in)
		}
	})
}

// A config saved with a UTF-8 byte order mark (Windows editors) is edited
// like any other and keeps its mark: 0.1 switched and restored such files.
func TestSetBackendKeepsAByteOrderMark(t *testing.T) {
	const bom = "\ufeff"
	for in, want := range map[string]string{
		bom + "backend: iptables-legacy\nverify:\n  wait: 3m\n": bom + "backend: iptables-nft\nverify:\n  wait: 3m\n",
		bom + "# notes\nbackend: 'auto' # x\r\n":                bom + "# notes\nbackend: iptables-nft # x\r\n",
		bom + "node_label: true\n":                              bom + "node_label: true\nbackend: iptables-nft\n",
		bom:                                                     bom + "backend: iptables-nft\n",
	} {
		got, err := SetBackend([]byte(in), "iptables-nft")
		if err != nil || string(got) != want {
			t.Errorf("SetBackend(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
