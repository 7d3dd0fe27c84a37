package prove

import (
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/nfdfeatures"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

// DefaultFeatureTTL is how long the node-feature-discovery labels of a
// verify run stand when no watch service renews them: verify runs once per
// RKE2 start, and its backend and the kernel hold until the next one, but
// a node whose tool was removed or stopped proving must lose them. Watch
// sets its own, a few of its full-verify periods.
const DefaultFeatureTTL = 24 * time.Hour

// publishFeatures writes res as the node's NFD labels, or removes ours
// when the operator turned them off (labels nobody renews must not stay).
func (c *Command) publishFeatures(res *verify.Result, now time.Time) error {
	if !c.NodeFeatures {
		return nfdfeatures.Remove(c.Root)
	}
	ttl := c.FeatureTTL
	if ttl <= 0 {
		ttl = DefaultFeatureTTL
	}
	return nfdfeatures.Publish(c.Root, func() nfdfeatures.Features {
		return featuresOf(res, hostplan.ProbeCapable(c.Root, distro.Find(c.Root, c.Host.Distribution).Kind))
	}, now, ttl)
}

// featuresOf is what res and the kernel say, as labels: the mode kube-proxy
// reported on /proxyMode, else the one its backend implies.
func featuresOf(res *verify.Result, kernel hostplan.Capable) nfdfeatures.Features {
	f := nfdfeatures.Features{Backend: string(res.Expect), ProxyMode: res.ProxyMode, Verified: res.Verdict, Version: version.Version}
	if f.ProxyMode == "" && res.Expect != "" {
		f.ProxyMode = res.Expect.ProxyMode()
	}
	f.Kernel(kernel)
	return f
}
