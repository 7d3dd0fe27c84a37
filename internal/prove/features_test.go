package prove

import (
	"errors"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// The NFD labels follow status.json: every stored result renews them, a
// run without a result and verify.node_feature_file: false remove them.
func TestNodeFeaturesFollowTheStatus(t *testing.T) {
	h := testhost.New(t).Debian12().Mkdir(hostfs.NFDFeaturesDir)
	c := &Command{Host: verify.Host{Root: h.Root()}, NodeFeatures: true, FeatureTTL: time.Hour}
	now := time.Now()
	res := &verify.Result{OK: true, Verdict: verify.VerdictOK, Expect: backend.IptablesNFT}
	if err := c.Publish(res, now); err != nil {
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
	_ = c.Invalidate(errors.New("no /proc"))
	gone("after a run without a result")

	if err := c.Publish(res, now); err != nil {
		t.Fatal(err)
	}
	c.NodeFeatures = false
	if err := c.Publish(res, now); err != nil {
		t.Fatal(err)
	}
	gone("with verify.node_feature_file: false")
}

func TestLoadTakesNodeFeatureFileFromTheConfig(t *testing.T) {
	for text, want := range map[string]bool{"": true, "verify:\n  node_feature_file: false\n": false} {
		c, err := Load(testhost.New(t).File(hostfs.ConfigFile, text).Root(), hostfs.ConfigFile, Flags{})
		if err != nil || c.NodeFeatures != want {
			t.Errorf("config %q: %v, NodeFeatures %v; want %v", text, err, c != nil && c.NodeFeatures, want)
		}
	}
}
