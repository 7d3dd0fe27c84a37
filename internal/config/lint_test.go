package config

import (
	"strconv"
	"strings"
	"testing"
)

// TestLint pins what a pipeline sees: the file and the line of the bad key
// or value, then the message the node would log, so the line an editor
// jumps to is the one to fix.
func TestLint(t *testing.T) {
	const file = "site/nas/config.yaml"
	for _, tc := range []struct{ name, text, want string }{
		{"ok", "backend: auto\nprefer: [iptables-nft]\n", ""},
		{"empty", "# all defaults\n", ""},
		{"typo key", "backend: auto\n\nprefr: [nftables]\n",
			file + `:3: unknown key "prefr" (valid keys: backend, prefer, legacy_triggers, respect_rke2_config, kube_proxy, node_label, node_taint, on_failure, verify, cni, census)`},
		{"bad value", "on_failure: warn\nbackend: modern\n",
			file + `:2: backend: "modern" is not a backend: use auto, off, iptables-legacy, iptables-nft or nftables (RKE2's kube-proxy image accepts only IPTABLES_MODE=legacy or nft; "modern" would make every iptables call in kube-proxy fail)`},
		{"nested key", "verify:\n  wait: 5m\n  textfile: /x\n",
			file + `:3: unknown key "verify.textfile" (valid keys under verify: wait, textfile_dir, node_feature_file, node_condition)`},
		{"block list item", "legacy_triggers:\n  pci_ids:\n    - \"1b4b:9235\"\n    - \"1b4b-9235\"\n",
			file + `:4: legacy_triggers.pci_ids: item 2: "1b4b-9235" is not a PCI id: use "vendor:device" in hex as lspci -n prints it, e.g. "1b4b:9235"`},
		{"duplicate", "backend: auto\nnode_label: true\nbackend: off\n",
			file + `:3: key "backend" is set twice (lines 1 and 3): keep one`},
		{"syntax", "backend: auto\n  prefer: [x\n",
			file + `:2: not valid YAML: mapping values are not allowed in this context`},
		{"section scalar", "verify: 5m\n",
			file + `:1: verify: must hold keys (wait, textfile_dir, node_feature_file, node_condition), not the value "5m"`},
		{"two documents", "backend: auto\n---\nbackend: off\n",
			file + `:2: holds more than one YAML document (a --- separator): put every key in one document`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Lint(file, []byte(tc.text))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Lint:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Lint refuses exactly what the node refuses, and every refusal names the
// file and a line that exists in it (or, for the file as a whole, no line).
func FuzzLint(f *testing.F) {
	for _, seed := range []string{"backend: auto\n", "backend: modern\n", "a:\n  - b\n  - c\n", "prefer:\n  - nftables\n  - nftables\n",
		"verify:\n  wait: -1s\n", "\n\n\nbackend: [\n", "legacy_triggers:\n  dmi: [\"[\"]\n", "---\n---\n"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		const file = "/cfg.yaml"
		_, loadErr := parseYAML(file, []byte(text))
		err := Lint(file, []byte(text))
		if (err == nil) != (loadErr == nil) {
			t.Fatalf("lint says %v, the node's read says %v", err, loadErr)
		}
		if err == nil {
			return
		}
		line := Line(err)
		if line == 0 {
			if err.Error() != loadErr.Error() {
				t.Fatalf("an error without a line is not the node's own: %q vs %q", err, loadErr)
			}
			return
		}
		if lines := yamlLines(text); line > lines {
			t.Fatalf("line %d of a %d-line file: %v", line, lines, err)
		}
		if !strings.HasPrefix(err.Error(), file+":"+strconv.Itoa(line)+": ") {
			t.Fatalf("error does not start with file:line: %v", err)
		}
	})
}

// yamlLines counts lines as YAML breaks them: CR, LF, CRLF, NEL, LS and PS.
func yamlLines(text string) int {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	n := 1
	for _, r := range text {
		switch r {
		case '\n', '\r', '\u0085', '\u2028', '\u2029':
			n++
		}
	}
	return n
}
