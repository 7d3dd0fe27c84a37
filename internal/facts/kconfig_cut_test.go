package facts

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On real kernel configs, reading only through the netfilter menus finds
// every option we record exactly as a full read does. The fixtures are
// committed, so this runs on every machine: Debian 12's stock amd64 config
// (linux-config-6.1, what /boot/config-* holds on kernels without
// /proc/config.gz) and a 6.18 kernel's /proc/config.gz (with
// CONFIG_NETFILTER_XTABLES_LEGACY). This machine's own config, when the
// kernel has one, is checked too.
func TestConfigCutLosesNothingOnRealConfigs(t *testing.T) {
	fixtures, err := filepath.Glob("testdata/kconfig/*.config.gz")
	if err != nil || len(fixtures) < 2 {
		t.Fatalf("kernel config fixtures: %v %v", fixtures, err)
	}
	configs := map[string][]byte{}
	for _, f := range fixtures {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		configs[f] = raw
	}
	if raw, err := os.ReadFile("/proc/config.gz"); err == nil {
		configs["/proc/config.gz"] = raw
	}
	for name, raw := range configs {
		t.Run(filepath.Base(name), func(t *testing.T) {
			full := gunzip(t, raw)
			if !bytes.Contains(full, []byte(netfilterEnd)) {
				t.Fatalf("%s has no %q: the cut is never taken", name, strings.TrimSpace(netfilterEnd))
			}
			want, err := parseKernelConfig(full, wantedOptions())
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("the full read found none of the options we record")
			}
			// Both forms a host has: /proc/config.gz and /boot/config-<release>.
			for form, data := range map[string][]byte{"/proc/config.gz": raw, "/boot/config-fixture": full} {
				got, err := parseConfigFile(form, data)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%s: cut read found %d options, full read %d:\n%v\n%v", form, len(got), len(want), got, want)
				}
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: CONFIG_%s: cut read %q, full read %q", form, k, got[k], v)
					}
				}
			}
		})
	}
}

func gunzip(t *testing.T, raw []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	full, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return full
}

func TestConfigCutStopsAfterNetfilter(t *testing.T) {
	text := "CONFIG_NF_TABLES=y\n# IPv6: Netfilter Configuration\nCONFIG_IP6_NF_IPTABLES=m\n" +
		strings.TrimPrefix(netfilterEnd, "\n") + "CONFIG_NFT_COMPAT=y\n"
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text))
	zw.Close()
	for name, data := range map[string][]byte{"/proc/config.gz": gz.Bytes(), "/boot/config-6.1.0": []byte(text)} {
		got, err := parseConfigFile(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got["NF_TABLES"] != Builtin || got["IP6_NF_IPTABLES"] != Module {
			t.Errorf("%s: options before the end of the netfilter menus lost: %v", name, got)
		}
		if _, ok := got["NFT_COMPAT"]; ok {
			t.Errorf("%s: read past the end of the netfilter menus: %v", name, got)
		}
	}
	// Without the marker (kernels before 5.1, or without IPv6) all is read.
	got, err := parseConfigFile("/boot/config-4.4.0", []byte("CONFIG_NF_TABLES=y\nCONFIG_NFT_COMPAT=y\n"))
	if err != nil || got["NFT_COMPAT"] != Builtin {
		t.Fatalf("config without the marker: %v %v", got, err)
	}
}
