// Package expectedtest loads kube-proxy's rendered footprint into the
// network namespace a test runs in (see nstest.InNetns), with the backend's
// own loader, as kube-proxy's sync would. It is for tests only; it lives
// outside package expected because expected's own tests import nstest.
package expectedtest

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// Load renders opts and loads each of opts.Families (both when empty, as
// expected.Render renders them) into opts.Backend, failing t on error. It
// returns what it loaded.
func Load(t testing.TB, opts expected.Options) *rules.Ruleset {
	t.Helper()
	rs, err := expected.Render(opts)
	if err != nil {
		t.Fatalf("rendering kube-proxy's footprint for %s: %v", opts.Backend, err)
	}
	fams := opts.Families
	if len(fams) == 0 {
		fams = []rules.Family{rules.IPv4, rules.IPv6}
	}
	for _, fam := range fams {
		if err := ruleload.Load(opts.Backend, rs, fam); err != nil {
			t.Fatal(err)
		}
	}
	return rs
}
