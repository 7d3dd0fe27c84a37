package apply

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2/dropin"
)

// What RKE2 reads once a run gave up is looked at, not assumed: our
// drop-in still there (a read-only /etc) is what RKE2 reads, with the
// backend its header names.
func TestReadsIsWhatIsAtThePath(t *testing.T) {
	legacy, err := dropin.Render(rke2.DropIn{Backend: backend.IptablesLegacy, KubeProxyEnv: []string{"IPTABLES_MODE=legacy"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file  string
		ipvs        bool
		want        plan.Applied
		reads       string
		nothingSays string
	}{
		{name: "absent", reads: ReadsDefaults, nothingSays: "why; RKE2 starts with its own defaults"},
		{name: "ours", file: string(legacy), reads: "the drop-in an earlier run left at " + dropInPath + ", which names iptables-legacy",
			want: plan.Applied{Backend: backend.IptablesLegacy, ProxyMode: "iptables", DropIn: dropInPath, By: plan.ByEarlierRun}},
		{name: "ours under ipvs", file: string(legacy), ipvs: true, reads: "which names iptables-legacy",
			want: plan.Applied{Backend: backend.IptablesLegacy, ProxyMode: "ipvs", DropIn: dropInPath, By: plan.ByEarlierRun}},
		{name: "ours, a backend unknown", file: rke2.DropInHeader + "; do not edit\n# kube-proxy backend: modern\nkube-proxy-arg+: []\n",
			reads: "its header names no backend this version knows", nothingSays: "why; RKE2 starts with the drop-in an earlier run left"},
		{name: "the operator's", file: "kube-proxy-arg: [proxy-mode=ipvs]\n", reads: ReadsOperators, nothingSays: "why; RKE2 starts with the operator's own drop-in"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := debianHost(t)
			if c.file != "" {
				h.File(dropInPath, c.file)
			}
			d := decision(backend.IptablesNFT)
			if c.ipvs {
				d.ProxyMode = decide.ProxyModeIPVS
			}
			got, reads := reads(Options{Root: h.Root(), RKE2Config: hostfs.RKE2ConfigFile}, dropInPath, d, "why")
			if !strings.Contains(reads, c.reads) || !strings.HasPrefix(got.Nothing, c.nothingSays) || (c.nothingSays == "") != (got.Nothing == "") {
				t.Errorf("reads %q, nothing %q; want %q, %q", reads, got.Nothing, c.reads, c.nothingSays)
			}
			got.Nothing = ""
			if got != c.want {
				t.Errorf("applied %+v, want %+v", got, c.want)
			}
		})
	}
}

// Every drop-in apply renders names its backend in the header, for RKE2
// and k3s alike.
func TestHeaderBackendReadsWhatRenderWrites(t *testing.T) {
	for _, b := range backend.All {
		for _, k3s := range []bool{false, true} {
			d := rke2.DropIn{Backend: b, KubeProxyArgs: []string{"proxy-mode=" + b.ProxyMode()}, NodeLabels: []string{"a=b"}}
			data, err := dropin.Render(d)
			if k3s {
				data, err = dropin.RenderK3s(d, true)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := headerBackend(data[:min(len(data), headRead)]); got != b {
				t.Errorf("k3s %t: headerBackend = %q, want %s", k3s, got, b)
			}
		}
	}
}

// FuzzHeaderBackend: any head names a backend this version knows, or
// none; and a drop-in rendered for a backend reads back as it.
func FuzzHeaderBackend(f *testing.F) {
	f.Add([]byte(rke2.DropInHeader + "; do not edit\n# kube-proxy backend: iptables-nft\nkube-proxy-arg+: []\n"))
	f.Add([]byte("# kube-proxy backend: iptables-legacy\n"))
	f.Add([]byte("\n# kube-proxy backend: nftables\r\n\n"))
	f.Fuzz(func(t *testing.T, head []byte) {
		b := headerBackend(head)
		if b != "" {
			if _, err := backend.Parse(string(b)); err != nil {
				t.Fatalf("headerBackend(%q) = %q, not a backend", head, b)
			}
			if !strings.Contains(string(head), backendLine+string(b)+"\n") {
				t.Fatalf("headerBackend(%q) = %q, not on a line of its own", head, b)
			}
		}
	})
}

// A drop-in path apply cannot look at (here its directory is a symlink
// loop) is neither "absent" nor "the operator's": remove is an error, and
// the plan says RKE2 reads whatever is there, never its own defaults.
func TestRemoveCannotTellIsAnError(t *testing.T) {
	h := debianHost(t)
	h.Symlink("/etc/rancher/rke2/config.yaml.d", "config.yaml.d")
	o := Options{Root: h.Root(), RKE2Config: hostfs.RKE2ConfigFile}
	if err := remove(o, dropInPath); err == nil || !strings.Contains(err.Error(), "cannot tell who owns") {
		t.Errorf("remove = %v, want an error saying it cannot tell", err)
	}
	a, r := reads(o, dropInPath, decision(backend.IptablesNFT), "why")
	if a.Backend != "" || !strings.Contains(r, "apply cannot read it") || strings.Contains(a.Nothing, ReadsDefaults) {
		t.Errorf("applied %+v, reads %q", a, r)
	}
}
