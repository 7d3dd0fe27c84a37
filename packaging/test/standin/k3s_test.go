package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// k3s's PATH puts the host's iptables first unless prefer-bundled-bin:
// the boot test's legacy-while-the-host-is-nft proof rests on this order.
func TestK3sPathPutsBundledFirstOnlyWithPreferBundledBin(t *testing.T) {
	t.Setenv("PATH", "/usr/sbin:/usr/bin")
	const bin, aux = "/var/lib/rancher/k3s/data/current/bin", "/var/lib/rancher/k3s/data/current/bin/aux"
	if got, want := k3sPath(map[string]any{}), bin+":/usr/sbin:/usr/bin:"+aux; got != want {
		t.Errorf("k3sPath without prefer-bundled-bin = %s, want %s", got, want)
	}
	if got, want := k3sPath(map[string]any{"prefer-bundled-bin": true, "data-dir": "/srv/k3s"}), "/srv/k3s/data/current/bin:/srv/k3s/data/current/bin/aux:/usr/sbin:/usr/bin"; got != want {
		t.Errorf("k3sPath with prefer-bundled-bin = %s, want %s", got, want)
	}
	if v := k3sVersion(); !strings.HasSuffix(v, "+k3s1") || strings.Contains(v, "rke2") {
		t.Errorf("k3sVersion() = %s, want k3s's spelling", v)
	}
}

// The recorded backend is where the first iptables on PATH really leads.
func TestObservedBackendFollowsTheLinks(t *testing.T) {
	dir := t.TempDir()
	for _, m := range []string{"legacy", "nft"} {
		if err := os.WriteFile(filepath.Join(dir, "xtables-"+m+"-multi"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	for target, want := range map[string]string{"xtables-legacy-multi": "iptables-legacy", "xtables-nft-multi": "iptables-nft"} {
		link := filepath.Join(dir, "iptables")
		os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if got, err := observedBackend("iptables"); got != want || err != nil {
			t.Errorf("iptables -> %s: observedBackend = %q, %v; want %s", target, got, err, want)
		}
	}
	if got, err := observedBackend("nftables"); got != "nftables" || err != nil {
		t.Errorf("observedBackend(nftables) = %q, %v", got, err)
	}
}
