package verify

import (
	"context"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// BenchmarkChecks5k measures verify's own work at 5,000 services, reading
// from a Fake with production's read options (which copies the ruleset per
// read): the kernel readers' cost is measured by bench/verify.sh, not here.
func BenchmarkChecks5k(b *testing.B) {
	for _, be := range backend.All {
		b.Run(string(be), func(b *testing.B) {
			rs, err := expected.Render(expected.Options{Backend: be, Services: 5000})
			if err != nil {
				b.Fatal(err)
			}
			fake := newFake(b, rs)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Run(context.Background(), Options{Expect: be, Reader: fake}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
