package certify

import (
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/certified"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// image is a node image built on Debian 12's real cloud kernel (its
// config, modules.dep and modules.builtin), the nft iptables alternative,
// RKE2's tarball unit and a binary of another architecture's kind: one
// that must not run (it exits 1), whose version is in its bytes.
func image(t *testing.T) *testhost.Host {
	return testhost.New(t).DebianCloudKernel().IptablesAlternative("nft").RKE2Unit("tarball", "server").
		Executable("/usr/local/bin/rke2", "#!/bin/sh\n# rke2 version v1.34.12+rke2r1 (a foreign build)\nexit 1\n").
		File("/var/lib/dpkg/status", "Package: iptables\nStatus: install ok installed\nVersion: 1.8.9-2\n\nPackage: nftables\nStatus: install ok installed\nVersion: 1.0.6-2+deb12u2\n\n")
}

func certifyImage(t *testing.T, h *testhost.Host) certified.Record {
	t.Helper()
	r, err := Image(hostplan.Host{Root: h.Root(), Environ: []string{"RKE2_PROXY_BACKEND=nftables"}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func backendNamed(t *testing.T, r certified.Record, name string) certified.Backend {
	t.Helper()
	i := slices.IndexFunc(r.Backends, func(b certified.Backend) bool { return b.Name == name })
	if i < 0 {
		t.Fatalf("no verdict for %s: %+v", name, r.Backends)
	}
	return r.Backends[i]
}

// The stock kernel runs every backend; auto picks the image's iptables
// flavour; the versions come from the image's files, and the builder's
// environment (RKE2_PROXY_BACKEND above) is not the node's.
func TestStockImage(t *testing.T) {
	r := certifyImage(t, image(t))
	if r.Verdict != certified.Runnable || r.Backend != "iptables-nft" || ExitCode(r) != 0 {
		t.Fatalf("verdict %s (%s), backend %s; want runnable on iptables-nft", r.Verdict, r.Why, r.Backend)
	}
	for _, b := range r.Backends {
		if !b.Runnable || !b.Confirmed || len(b.Missing) != 0 {
			t.Errorf("%s on the stock kernel: %+v", b.Name, b)
		}
	}
	if r.Kernel.Release != testhost.DebianCloudRelease || !slices.Contains(r.Kernel.Modules, "nf_tables") || !slices.Contains(r.Kernel.Modules, "ip_tables") {
		t.Errorf("kernel %+v", r.Kernel)
	}
	if r.Distribution.Version != "v1.34.12+rke2r1" || !strings.Contains(r.Distribution.VersionSource, "without running it") {
		t.Errorf("RKE2 version %q from %q: want the binary's embedded string, not run", r.Distribution.Version, r.Distribution.VersionSource)
	}
	if r.Userspace.IptablesVersion != "1.8.9" || r.Userspace.NftVersion != "1.0.6" || !strings.Contains(r.Userspace.VersionSource, "/var/lib/dpkg/status") {
		t.Errorf("userspace %+v", r.Userspace)
	}
}

// Without nf_tables.ko (issue 30's NAS image): a config asking for
// iptables-nft cannot be honoured (exit 1) and the module and the package
// that ships it are named; auto finds iptables-legacy (exit 0).
func TestImageWithoutNfTables(t *testing.T) {
	h := image(t).DeleteModules("nf_tables")
	auto := certifyImage(t, h)
	if auto.Verdict != certified.Runnable || auto.Backend != "iptables-legacy" {
		t.Errorf("auto: %s (%s) on %s; want runnable on iptables-legacy", auto.Verdict, auto.Why, auto.Backend)
	}
	h.File(hostfs.ConfigFile, "backend: iptables-nft\n")
	r := certifyImage(t, h)
	if r.Verdict != certified.NotRunnable || ExitCode(r) != 1 || r.Asked != "iptables-nft" || r.AskedBy != hostfs.ConfigFile {
		t.Fatalf("verdict %s (%s), asked %s by %s; want not-runnable for the config's iptables-nft", r.Verdict, r.Why, r.Asked, r.AskedBy)
	}
	nft := backendNamed(t, r, "iptables-nft")
	if nft.Runnable || len(nft.Missing) == 0 {
		t.Fatalf("iptables-nft: %+v", nft)
	}
	m := nft.Missing[0]
	if m.Kind != KernelModule || !slices.Equal(m.Modules, []string{"nf_tables"}) || !strings.Contains(m.Add, "linux-image-"+testhost.DebianCloudRelease) {
		t.Errorf("missing %+v: want the nf_tables module file from Debian's kernel package", m)
	}
	if legacy := backendNamed(t, r, "iptables-legacy"); !legacy.Runnable || !legacy.Confirmed {
		t.Errorf("iptables-legacy: %+v", legacy)
	}
	if slices.Contains(r.Kernel.Modules, "nf_tables") {
		t.Errorf("the record lists nf_tables as present: %v", r.Kernel.Modules)
	}
}

// Without the legacy ip_tables (a kernel packaged without legacy
// xtables): a config asking for iptables-legacy fails with the module
// named; the nf_tables backends still run.
func TestImageWithoutLegacyTables(t *testing.T) {
	h := image(t).DeleteModules("ip_tables").File(hostfs.ConfigFile, "backend: iptables-legacy\n")
	r := certifyImage(t, h)
	if r.Verdict != certified.NotRunnable {
		t.Fatalf("verdict %s (%s); want not-runnable", r.Verdict, r.Why)
	}
	legacy := backendNamed(t, r, "iptables-legacy")
	if legacy.Runnable || len(legacy.Missing) == 0 || !slices.Contains(legacy.Missing[0].Modules, "ip_tables") {
		t.Errorf("iptables-legacy: %+v", legacy)
	}
	if nft := backendNamed(t, r, "iptables-nft"); !nft.Runnable || !nft.Confirmed {
		t.Errorf("iptables-nft: %+v", nft)
	}
}

// A kernel built without the option (and so without its module) is
// another kernel to add, not a package.
func TestKernelWithoutTheOption(t *testing.T) {
	h := image(t).DeleteModules("nf_tables")
	cfg := "/boot/config-" + testhost.DebianCloudRelease
	data, err := h.Root().ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.File(cfg, strings.ReplaceAll(string(data), "CONFIG_NF_TABLES=m", "# CONFIG_NF_TABLES is not set")).File(hostfs.ConfigFile, "backend: nftables\n")
	r := certifyImage(t, h)
	nft := backendNamed(t, r, "nftables")
	if r.Verdict != certified.NotRunnable || nft.Runnable || len(nft.Missing) == 0 || nft.Missing[0].Kind != KernelConfig || !strings.Contains(nft.Missing[0].Add, "CONFIG_NF_TABLES") {
		t.Errorf("verdict %s, nftables %+v: want a kernel built with CONFIG_NF_TABLES", r.Verdict, nft)
	}
}

// Cannot tell: no kernel in the image, or a module tree that cannot be
// read (the config says m and nothing confirms the file).
func TestCannotTell(t *testing.T) {
	bare := testhost.New(t).IptablesAlternative("nft")
	if r := certifyImage(t, bare); r.Verdict != certified.CannotTell || ExitCode(r) != 2 || !strings.Contains(r.Why, "no kernel is installed") {
		t.Errorf("no kernel: %s (%s)", r.Verdict, r.Why)
	}
	noTree := image(t).Remove("/lib/modules/" + testhost.DebianCloudRelease + "/modules.dep")
	if r := certifyImage(t, noTree); r.Verdict != certified.CannotTell || ExitCode(r) != 2 {
		t.Errorf("no modules.dep: %s (%s)", r.Verdict, r.Why)
	}
}

// The tool turned off is no failure of the image; a broken config is an
// error, not a verdict.
func TestConfigOffAndBroken(t *testing.T) {
	if r := certifyImage(t, image(t).File(hostfs.ConfigFile, "backend: off\n")); r.Verdict != certified.Runnable || r.Backend != "" {
		t.Errorf("off: %s (%s) backend %q", r.Verdict, r.Why, r.Backend)
	}
	h := image(t).File(hostfs.ConfigFile, "backend: modern\n")
	if _, err := Image(hostplan.Host{Root: h.Root()}); err == nil || !strings.Contains(err.Error(), "modern") {
		t.Errorf("a broken config gave %v; want its error", err)
	}
}

// Same image, same bytes: the record has no timestamp.
func TestRecordIsReproducible(t *testing.T) {
	a, _ := certified.Marshal(certifyImage(t, image(t)))
	b, _ := certified.Marshal(certifyImage(t, image(t)))
	if string(a) != string(b) {
		t.Errorf("two certifications of the same image differ:\n%s\n%s", a, b)
	}
}
