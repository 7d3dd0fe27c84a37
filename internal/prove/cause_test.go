package prove

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/events"
)

// A run's cause: its writers, last first, bounded; or why none is known.
func TestCause(t *testing.T) {
	kp := events.Writer{PID: 99, Comm: "kube-proxy", Origin: events.Origin{PodUID: "0f3c5a4e-8b1d-4c2a-9e7f-123456789abc", Container: "4f1e"}, Commits: 3}
	nft := events.Writer{PID: 1234, Comm: "nft", Origin: events.Origin{Exited: true}, Commits: 1}
	svc := events.Writer{PID: 7, Comm: "firewalld", Origin: events.Origin{Unit: "firewalld.service"}, Commits: 1}
	for _, tc := range []struct {
		name string
		c    Cause
		want string
	}{
		{"writers", causeOf(events.Change{Commits: 4, Writers: []events.Writer{kp, nft}, OtherWriters: 2}, true),
			"changed by 1234 (nft, exited), 99 (kube-proxy, pod 0f3c5a4e-8b1d-4c2a-9e7f-123456789abc container 4f1e) and 2 more"},
		{"a unit", causeOf(events.Change{Commits: 1, Writers: []events.Writer{svc}}, true), "changed by 7 (firewalld, unit firewalld.service)"},
		{"legacy", causeOf(events.Change{Commits: 1, Writers: []events.Writer{nft}}, true).forBackend(backend.IptablesLegacy),
			"writer unknown (iptables-legacy sends no change events)"},
		{"polling", causeOf(events.Change{}, false), "writer unknown (polling: no nftables change events)"},
		{"overrun", causeOf(events.Change{Overrun: true}, true), "writer unknown (the kernel dropped change events)"},
		{"no commit", causeOf(events.Change{}, true), "writer unknown (no nf_tables commit before the run that found it)"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
