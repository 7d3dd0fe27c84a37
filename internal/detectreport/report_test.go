package detectreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func load(t *testing.T, h *testhost.Host) Report {
	t.Helper()
	p, err := hostplan.Load(hostplan.Host{Root: h.Root()}, hostplan.Detect)
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A server going to nftables gets its CNI's manifest in both views, in
// the text after the facts and before the problems, as apply would write it.
func TestReportCarriesTheCNIManifest(t *testing.T) {
	h := testhost.New(t).Debian12().RKE2Unit("tarball", "server").RKE2Version("v1.34.10+rke2r1").
		File(hostfs.ConfigFile, "prefer: [nftables]\n")
	r := load(t, h)
	if r.Decision.Backend != "nftables" || len(r.Manifests) != 1 {
		t.Fatalf("backend %s, %d manifests; want nftables and one", r.Decision.Backend, len(r.Manifests))
	}
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	m, out := r.Manifests[0], text.String()
	at := strings.Index(out, "as "+m.File+"\n(cluster-wide; cni.helmchartconfig: write has apply write it):\n\n"+m.Content+"\nproblems:\n")
	if at < 0 || at < strings.Index(out, "\n  config:") {
		t.Errorf("the manifest is not between the facts and the problems:\n%s", out)
	}
	var doc struct {
		CNIManifests []struct{ File, Content string } `json:"cni_manifests"`
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || len(doc.CNIManifests) != 1 || doc.CNIManifests[0].Content != m.Content {
		t.Errorf("JSON manifests %+v (%v)", doc.CNIManifests, err)
	}
}

// On a quiet host host_conflicts is an empty list, not null, and there
// are no manifests: scripts count the one and test for the other.
func TestReportJSONOnAQuietHost(t *testing.T) {
	r := load(t, testhost.New(t).Debian12())
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	out := js.String()
	if !strings.Contains(out, "\n  \"host_conflicts\": []\n") || strings.Contains(out, "cni_manifests") {
		t.Errorf("want an empty host_conflicts and no cni_manifests:\n%s", out)
	}
	if !strings.Contains(out, `"wait": "5m"`) || !strings.HasPrefix(out, "{\n  \"schema\": 1,\n") || !strings.HasSuffix(out, "}\n") {
		t.Errorf("schema, verify.wait or the framing:\n%s", out)
	}
}
