package facts

import (
	"reflect"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// VerifyAddOnFacts reads the same RKE2 facts, command line and nft
// version as a full Probe, and none of the kernel, module or hardware
// facts (which the add-ons never use).
func TestVerifyAddOnFactsAreProbesPart(t *testing.T) {
	for name, build := range map[string]func(*testhost.Host) *testhost.Host{
		"synology": (*testhost.Host).Synology44,
		"empty":    func(h *testhost.Host) *testhost.Host { return h },
		"rke2 1.38 with kube-proxy args": func(h *testhost.Host) *testhost.Host {
			return h.RKE2v138().KubeProxyArgs("config.yaml", false, "proxy-mode=ipvs")
		},
	} {
		root := build(testhost.New(t)).Root()
		opts := Options{ToolVersions: true}
		full, narrow := Probe(root, opts), VerifyAddOnFacts(root, opts)
		if name != "empty" && full.RKE2.Version == "" && name != "synology" {
			t.Errorf("%s: the fixture has no RKE2 version: the comparison says nothing", name)
		}
		if !reflect.DeepEqual(full.RKE2, narrow.RKE2) || !reflect.DeepEqual(full.Cmdline, narrow.Cmdline) || full.Userspace.Nft != narrow.Userspace.Nft {
			t.Errorf("%s: narrow facts differ from Probe's:\nRKE2 %+v\n vs  %+v\ncmdline %q vs %q\nnft %+v vs %+v", name, narrow.RKE2, full.RKE2, narrow.Cmdline, full.Cmdline, narrow.Userspace.Nft, full.Userspace.Nft)
		}
		if narrow.Kernel.Release != "" || len(narrow.Modules.Loaded) != 0 || len(narrow.Hardware.PCI) != 0 {
			t.Errorf("%s: the narrow probe read the kernel, modules or hardware: %+v %+v %+v", name, narrow.Kernel, narrow.Modules, narrow.Hardware)
		}
	}
}
