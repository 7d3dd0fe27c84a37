package decide

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// Runnable splits the backends into those the facts do not rule out
// (supported or unconfirmed, as auto sees them) and those they do, with the
// clause that says why. bench measures the first kind only.
func Runnable(f facts.Facts) (runnable []backend.Backend, not map[backend.Backend]string) {
	not = map[backend.Backend]string{}
	caps := assess(f)
	for _, b := range backend.All {
		if caps[b].support == unsupported {
			not[b] = caps[b].why
			continue
		}
		runnable = append(runnable, b)
	}
	return runnable, not
}
