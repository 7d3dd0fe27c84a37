package main

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/kubernetes/pkg/proxy/metrics"
)

// waitSynced waits until every family's proxier has finished a successful
// sync. The proxiers set kubeproxy_sync_proxy_rules_last_timestamp_seconds
// only at the end of a sync that wrote the rules (the healthz timestamp is
// no use: SyncLoop sets it before the first sync), and they do not sync at
// all before both the Service and EndpointSlice handlers reported synced,
// which happened before this is called, so the first timestamp means every
// Service is in the rules.
func waitSynced(ctx context.Context, fams []v1.IPFamily) error {
	pending := map[v1.IPFamily]bool{}
	for _, f := range fams {
		pending[f] = true
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		for f := range pending {
			v, err := testutil.GetGaugeMetricValue(metrics.SyncProxyRulesLastTimestamp.WithLabelValues(string(f)))
			if err == nil && v > 0 {
				delete(pending, f)
			}
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no successful sync for %v before the timeout (%w); run with -v=2 to see the proxier's errors", keys(pending), ctx.Err())
		case <-tick.C:
		}
	}
}

func keys(m map[v1.IPFamily]bool) []v1.IPFamily {
	var out []v1.IPFamily
	for k := range m {
		out = append(out, k)
	}
	return out
}
