package proof

import (
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

func TestPublishOnlyWhereNFDLooks(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	h := testhost.New(t)
	if err := WriteFeatures(h.Root(), func() Features { t.Fatal("features asked for on a host without NFD"); return sample }, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	if h.Root().Exists(hostfs.NFDFeaturesDir) {
		t.Fatal("Publish created NFD's directory on a host without NFD")
	}
	h.Mkdir(hostfs.NFDFeaturesDir)
	if err := WriteFeatures(h.Root(), func() Features { return sample }, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	data, err := h.Root().ReadFile(hostfs.NFDFeatureFile)
	if err != nil {
		t.Fatal(err)
	}
	if got := nfdLabels(t, data, now.Add(59*time.Minute)); got[LabelNamespace+"/"+LabelPrefix+LabelBackend] != "iptables-nft" {
		t.Errorf("NFD reads %v", got)
	}
	entries, _ := h.Root().ReadDir(hostfs.NFDFeaturesDir)
	if len(entries) != 1 {
		t.Errorf("features.d holds %v; want only our file (no temporary left)", entries)
	}
}

// A run that cannot write its labels leaves none: NFD would otherwise
// keep the previous run's until they expire.
func TestPublishThatFailsRemovesThePrevious(t *testing.T) {
	now := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	h := testhost.New(t).Mkdir(hostfs.NFDFeaturesDir)
	if err := WriteFeatures(h.Root(), func() Features { return sample }, now, time.Hour); err != nil {
		t.Fatal(err)
	}
	err := WriteFeatures(h.Root(), func() Features { return Features{Backend: "not a value"} }, now, time.Hour)
	if err == nil || !strings.Contains(err.Error(), hostfs.NFDFeatureFile) {
		t.Fatalf("got %v; want the error naming the file", err)
	}
	if h.Root().Exists(hostfs.NFDFeatureFile) {
		t.Fatal("the previous labels are still there")
	}
	if err := RemoveFeatures(h.Root()); err != nil {
		t.Errorf("Remove without a file: %v", err)
	}
}

// The NFD labels follow status.json: every stored result renews them, a
// run without a result and verify.node_feature_file: false remove them.
func TestNodeFeaturesFollowTheStatus(t *testing.T) {
	h := testhost.New(t).Debian12().Mkdir(hostfs.NFDFeaturesDir)
	o := Outputs{Features: true, FeatureTTL: time.Hour}
	now := time.Now()
	res := &verify.Result{OK: true, Verdict: verify.VerdictOK, Expect: backend.IptablesNFT}
	store := func(res *verify.Result, why string) error {
		s := Of(h.Root(), res, why, now)
		return s.Store(o)
	}
	if err := store(res, ""); err != nil {
		t.Fatal(err)
	}
	data, err := h.Root().ReadFile(hostfs.NFDFeatureFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# +expiry-time=" + now.Add(time.Hour).UTC().Format(time.RFC3339) + "\n",
		"feature.node.kubernetes.io/rke2-proxy-backend.backend=iptables-nft\n",
		"feature.node.kubernetes.io/rke2-proxy-backend.proxy-mode=iptables\n",
		"feature.node.kubernetes.io/rke2-proxy-backend.verified=ok\n",
		// Debian 12's fixture kernel runs every backend.
		"feature.node.kubernetes.io/rke2-proxy-backend.legacy-xtables=true\n",
		"feature.node.kubernetes.io/rke2-proxy-backend.nf-tables=true\n",
		"feature.node.kubernetes.io/rke2-proxy-backend.nftables-mode=true\n",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("feature file lacks %q:\n%s", want, data)
		}
	}
	gone := func(when string) {
		t.Helper()
		if h.Root().Exists(hostfs.NFDFeatureFile) {
			t.Errorf("%s: the feature file is still there", when)
		}
	}
	_ = store(nil, "verify could not run: no /proc")
	gone("after a run without a result")

	if err := store(res, ""); err != nil {
		t.Fatal(err)
	}
	o.Features = false
	if err := store(res, ""); err != nil {
		t.Fatal(err)
	}
	gone("with verify.node_feature_file: false")
}
