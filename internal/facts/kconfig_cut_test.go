package facts

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"
)

// On a real kernel config, reading only through the netfilter menus finds
// every option we record exactly as a full read does.
func TestConfigCutLosesNothingOnThisKernel(t *testing.T) {
	raw, err := os.ReadFile("/proc/config.gz")
	if err != nil {
		t.Skipf("no /proc/config.gz on this kernel: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	full, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	want, err := parseKernelConfig(full, wantedOptions)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseConfigFile("/proc/config.gz", raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("cut read found %d options, full read %d:\n%v\n%v", len(got), len(want), got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("CONFIG_%s: cut read %q, full read %q", k, got[k], v)
		}
	}
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
