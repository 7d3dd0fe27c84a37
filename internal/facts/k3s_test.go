package facts

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// On k3s the probe reads k3s's units, config and data dir, and apply's
// probe asks the binary the unit runs for its version (k3s's data
// directory names none).
func TestProbeK3s(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s-agent", "agent").K3sBinary("/usr/local/bin/k3s", "v1.30.4+k3s1").
		K3sConfig("/srv/k3s.yaml", "data-dir: /srv/k3s\n").EnvFile("/etc/systemd/system/k3s-agent.service.env", "K3S_CONFIG_FILE=/srv/k3s.yaml")
	f := Probe(h.Root(), Options{Distribution: distro.Kind("k3s"), RKE2Binary: true})
	r := f.RKE2
	if len(r.Units) != 1 || r.Units[0].Name != "k3s-agent.service" || r.Units[0].Role != "agent" || r.Units[0].Binary != "/usr/local/bin/k3s" {
		t.Errorf("units %+v", r.Units)
	}
	if r.ConfigFile != "/srv/k3s.yaml" || r.DataDir != "/srv/k3s" {
		t.Errorf("config %s, data dir %s", r.ConfigFile, r.DataDir)
	}
	if r.Version != "v1.30.4+k3s1" || r.Kubernetes.Minor != 30 || r.VersionSource != "/usr/local/bin/k3s --version" {
		t.Errorf("version %q (%s), kubernetes %v", r.Version, r.VersionSource, r.Kubernetes)
	}
	// The same host probed as RKE2 has no units: nothing is mistaken.
	if rk := Probe(h.Root(), Options{}).RKE2; len(rk.Units) != 0 || rk.ConfigFile != "/etc/rancher/rke2/config.yaml" {
		t.Errorf("as RKE2: units %+v, config %s", rk.Units, rk.ConfigFile)
	}
}

// The nfts on k3s's PATH: k3s-root's bin/aux/nft once k3s has extracted
// its binaries, and the first one in the unit's PATH; a file that is not
// executable is none, and apply asks each found one its version.
func TestProbeK3sNft(t *testing.T) {
	const aux = "/var/lib/rancher/k3s/data/0123abcd/bin/aux"
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sAux("iptables-detect.sh").
		Executable(aux+"/nft", "#!/bin/sh\necho 'nftables v1.1.0 (Commodore Bullmoose #4)'\n").
		File("/var/lib/rancher/k3s/data/0123abcd/bin/nft", "not executable\n").
		File("/usr/local/sbin/nft", "not executable\n").
		Executable("/usr/sbin/nft", "#!/bin/sh\necho 'nftables v1.0.6 (Lester Gooch #5)'\n")
	n := Probe(h.Root(), Options{Distribution: distro.Kind("k3s")}).RKE2.K3sNft
	want := K3sNft{Extracted: true, Aux: "/var/lib/rancher/k3s/data/current/bin/aux/nft", Host: "/usr/sbin/nft"}
	if n == nil || !reflect.DeepEqual(*n, want) {
		t.Fatalf("k3s nft %+v, want %+v", n, want)
	}
	n = Probe(h.Root(), Options{Distribution: distro.Kind("k3s"), AskNft: true}).RKE2.K3sNft
	if v := n.Versions[want.Aux]; v.Version != "1.1.0" || v.Source != want.Aux+" --version" {
		t.Errorf("bundled nft version %+v", n.Versions)
	}
	if _, asked := n.Versions["/usr/sbin/nft"]; asked {
		t.Errorf("the host's /usr/sbin/nft was asked twice: %+v", n.Versions)
	}
	run := Probe(h.Root(), Options{Distribution: distro.Kind("k3s"), AskNft: true}).RKE2
	var err error
	run.Config = rke2.Merge([]rke2.File{{Path: "/etc/rancher/k3s/config.yaml", Values: map[string]any{"prefer-bundled-bin": false}}})
	if r := run.K3sRunningNft(ToolVersion{Version: "1.0.6", Source: "/usr/sbin/nft --version"}); r.Path != "/usr/sbin/nft" || r.Dir != K3sNftHost || r.Version.Version != "1.0.6" {
		t.Errorf("without prefer-bundled-bin the host's nft runs: %+v", r)
	}
	run.Config = rke2.Merge(nil)
	if run.Kubernetes, err = rke2.ParseVersion("v1.31.2+k3s1"); err != nil {
		t.Fatal(err)
	}
	if r := run.K3sRunningNft(ToolVersion{}); r.Path != want.Aux || r.Dir != K3sNftAux || !r.BundledFirst || r.Version.Version != "1.1.0" {
		t.Errorf("with prefer-bundled-bin (apply sets it where the release knows it) the bundled nft runs: %+v", r)
	}
	// Before k3s's first start nothing is extracted; RKE2 has none of it.
	bare := testhost.New(t).Debian12().K3sUnit("k3s", "server")
	if n := Probe(bare.Root(), Options{Distribution: distro.Kind("k3s")}).RKE2.K3sNft; n == nil || n.Extracted || n.Aux != "" || n.Host != "" {
		t.Errorf("not extracted: %+v", n)
	}
	if n := Probe(bare.Root(), Options{}).RKE2.K3sNft; n != nil {
		t.Errorf("RKE2 has a k3s nft: %+v", n)
	}
}

// A k3s config that k3s would refuse is named as k3s's config, file and
// line, so the operator fixes the right file; RKE2's keeps RKE2's name.
func TestProbeK3sBadConfigNamesK3s(t *testing.T) {
	h := testhost.New(t).Debian12().K3sUnit("k3s", "server").K3sConfig("config.yaml", "- not a mapping\n")
	got := strings.Join(Probe(h.Root(), Options{Distribution: distro.Kind("k3s")}).Unreadable, "\n")
	if want := "k3s config /etc/rancher/k3s/config.yaml: line 1: expected a mapping"; !strings.Contains(got, want) || strings.Contains(got, "RKE2") {
		t.Errorf("unreadable:\n%s\nwant %q and no RKE2", got, want)
	}
	r := testhost.New(t).Debian12().File("/etc/rancher/rke2/config.yaml", "- not a mapping\n")
	if got := strings.Join(Probe(r.Root(), Options{}).Unreadable, "\n"); !strings.Contains(got, "RKE2 config /etc/rancher/rke2/config.yaml: line 1") {
		t.Errorf("RKE2's unreadable:\n%s", got)
	}
}
