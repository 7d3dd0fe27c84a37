package hostplan

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/certified"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// certifiedFor writes the certificate of an image whose kernel was
// release, with the modules named, on which iptables-nft was runnable.
func certifiedFor(h *testhost.Host, release string, modules ...string) *testhost.Host {
	data, err := certified.Marshal(certified.Record{Verdict: certified.Runnable, Backend: "iptables-nft", Asked: "auto",
		Kernel:   certified.Kernel{Release: release, Modules: modules},
		Backends: []certified.Backend{{Name: "iptables-nft", Runnable: true, Confirmed: true}}})
	if err != nil {
		panic(err)
	}
	return h.File(certified.File, string(data))
}

// The booted machine is held against its image's certificate: nothing
// when it is the machine certified (or there is no certificate), else one
// notice naming the kernel, the modules gone and the backend lost.
func TestCertification(t *testing.T) {
	load := func(h *testhost.Host) Plan {
		p, err := Load(Host{Root: h.Root()}, Boot)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := load(testhost.New(t).DebianCloudNode()); p.Certified != nil {
		t.Errorf("no certificate, yet %+v", p.Certified)
	}
	same := load(certifiedFor(testhost.New(t).DebianCloudNode(), testhost.DebianCloudRelease, "nf_tables", "ip_tables"))
	if same.Certified == nil || same.Certified.Notice != "" || len(same.Certified.Differs) != 0 {
		t.Errorf("the certified machine: %+v", same.Certified)
	}
	gone := load(certifiedFor(testhost.New(t).DebianCloudNode().DeleteModules("nf_tables"), testhost.DebianCloudRelease, "nf_tables", "ip_tables"))
	n := gone.Certified.Notice
	for _, want := range []string{"nf_tables, which the certified kernel had, is not in this kernel", "iptables-nft, certified runnable, is not: the kernel has no nf_tables module"} {
		if !strings.Contains(n, want) {
			t.Errorf("notice %q lacks %q", n, want)
		}
	}
	other := load(certifiedFor(testhost.New(t).DebianCloudNode(), "6.1.0-9-cloud-amd64", "nf_tables"))
	if !strings.Contains(other.Certified.Notice, "it boots kernel "+testhost.DebianCloudRelease+", the image was certified for 6.1.0-9-cloud-amd64") {
		t.Errorf("another kernel: %q", other.Certified.Notice)
	}
	// The image itself is judged by certify, not held against itself.
	if p := load(certifiedFor(testhost.New(t).DebianCloudKernel(), "6.1.0-9-cloud-amd64")); p.Certified != nil {
		t.Errorf("an image root compared with its own certificate: %+v", p.Certified)
	}
	broken := load(testhost.New(t).DebianCloudNode().File(certified.File, "{"))
	if broken.Certified == nil || !strings.Contains(broken.Certified.Notice, certified.File) {
		t.Errorf("an unreadable certificate: %+v", broken.Certified)
	}
}
