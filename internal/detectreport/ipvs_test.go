package detectreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// detect shows kube-proxy's mode beside the backend: ipvs with the
// iptables backend under it and its scheduler, in text and in JSON
// (proxy_mode as before, ipvs_scheduler added); other modes by name.
func TestReportShowsTheProxyMode(t *testing.T) {
	r := load(t, testhost.New(t).IPVSNodeOn("v1.38.0+rke2r1"))
	var text, js bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	want := "backend: iptables-nft (source: auto)\nproxy mode: ipvs (kept from RKE2's config; iptables-nft under it, scheduler sh)\nkube-proxy: IPTABLES_MODE=nft\n"
	if !strings.HasPrefix(text.String(), want) {
		t.Errorf("text starts\n%s\nwant\n%s", text.String()[:min(len(text.String()), 300)], want)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Decision map[string]any `json:"decision"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	d := doc.Decision
	if d["backend"] != "iptables-nft" || d["proxy_mode"] != "ipvs" || d["iptables_mode"] != "nft" || d["ipvs_scheduler"] != "sh" {
		t.Errorf("JSON decision %v", d)
	}

	r = load(t, testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.34.10+rke2r1"))
	text.Reset()
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "\nproxy mode: iptables\n") {
		t.Errorf("text lacks the mode:\n%s", text.String())
	}
}

// detect names kube-proxy's ipvs state; off ipvs mode it is a leftover with
// the command that shows the sweep, on an ipvs node it is the footprint.
func TestIPVSStateText(t *testing.T) {
	state := []string{"ipset KUBE-CLUSTER-IP", "link kube-ipvs0"}
	cases := []struct {
		state []string
		mode  string
		want  string
	}{
		{nil, "iptables", "none"},
		{state, "ipvs", "ipset KUBE-CLUSTER-IP, link kube-ipvs0"},
		{state, "nftables", "ipset KUBE-CLUSTER-IP, link kube-ipvs0 (leftovers: kube-proxy is not in ipvs mode; `rke2-proxy-backend cleanup --ipvs-leftovers --dry-run` shows what the sweep removes)"},
	}
	for _, c := range cases {
		if got := ipvsStateText(c.state, c.mode); got != c.want {
			t.Errorf("ipvsStateText(%q, %s) = %q, want %q", c.state, c.mode, got, c.want)
		}
	}
}
