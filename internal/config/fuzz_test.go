package config

import (
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// recheckOrNamed checks a fuzzed source's outcome: an error must start with
// prefix (it names the source, what), accepted values must re-check.
func recheckOrNamed(t *testing.T, values map[string]any, err error, prefix, what string) {
	t.Helper()
	if err != nil {
		if !strings.HasPrefix(err.Error(), prefix) {
			t.Fatalf("error does not name %s: %v", what, err)
		}
		return
	}
	recheck(t, values)
}

// recheck asserts that every accepted value is a known key whose value
// passes its own check again unchanged (normalisation is idempotent), so a
// parser can never hand the decision something validation would refuse.
func recheck(t *testing.T, values map[string]any) {
	t.Helper()
	for k, v := range values {
		s, ok := lookup(k)
		if !ok {
			t.Fatalf("accepted unknown key %q", k)
		}
		var items []string
		switch x := v.(type) {
		case string:
			items = []string{x}
		case []string:
			items = x
		case bool:
			continue
		case Duration:
			if x < 0 || x > Duration(24*time.Hour) {
				t.Fatalf("%s: accepted duration %v", k, x)
			}
			continue
		default:
			t.Fatalf("%s: value of type %T", k, v)
		}
		for _, item := range items {
			if s.check == nil {
				continue
			}
			again, err := s.check(item)
			if err != nil || again != item {
				t.Fatalf("%s: accepted %q, which re-checks as %q, %v", k, item, again, err)
			}
		}
	}
}

func FuzzParseYAML(f *testing.F) {
	for _, seed := range []string{
		"", "backend: auto\n", "backend: modern\n", "prefer: [nftables, iptables-nft]\n",
		"legacy_triggers:\n  modules: [\"mv-*\"]\n  pci_ids: [\"0x1b4b:0x9235\"]\n  dmi: [\"Syn[ol]*\"]\n",
		"kube_proxy:\n  extra_args: [\"--a=b\", \"feature-gates=X=true\"]\n",
		"verify:\n  wait: 1h\n  textfile_dir: /x/../y\n", "node_label: yes\n", "node_taint: rke2-proxy-backend/backend=nftables:NoExecute\n", "a: &x 1\nb: *x\n",
		"backend: auto\n---\n", "[1, 2]", "verify: {wait: 5m, wait: 6m}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		values, err := parseYAML("/cfg.yaml", []byte(text))
		recheckOrNamed(t, values, err, "/cfg.yaml: ", "the file")
	})
}

func FuzzEnv(f *testing.F) {
	f.Add("RKE2_PROXY_BACKEND", "iptables-nft")
	f.Add("RKE2_PROXY_BACKEND_PREFER", "iptables-nft, ,iptables-legacy")
	f.Add("RKE2_PROXY_BACKEND_KUBE_PROXY_EXTRA_ARGS", "a=1  b=2,3")
	f.Add("RKE2_PROXY_BACKEND_VERIFY_WAIT", "1h1m")
	f.Add("RKE2_PROXY_BACKEND_X", "1")
	f.Fuzz(func(t *testing.T, name, value string) {
		values, err := fromEnv([]string{name + "=" + value})
		recheckOrNamed(t, values, err, "environment variable ", "the variable")
	})
}

func FuzzCmdline(f *testing.F) {
	f.Add("ro quiet rke2.proxy_backend=iptables-legacy")
	f.Add("rke2.proxy_backend=\"nftables\" rke2.proxy_backend=off")
	f.Add("rke2.proxy_backend= rke2.proxy_backend")
	f.Add("rke2.proxy_backend=modern")
	f.Fuzz(func(t *testing.T, line string) {
		values, err := fromCmdline(strings.Fields(line))
		recheckOrNamed(t, values, err, hostfs.ProcCmdline+": ", hostfs.ProcCmdline)
		if len(values) > 1 {
			t.Fatalf("cmdline set more than the backend: %v", values)
		}
	})
}
