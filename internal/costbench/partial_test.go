package costbench

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// A partial sync writes what kube-proxy writes: the always-written chains
// and the changed service's chains, deletes the old endpoint chain, and
// leaves the other services alone.
func TestPartialTextTouchesOneService(t *testing.T) {
	for _, b := range backend.All {
		fp, err := newFootprint(b, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
			text := partialText(fp, fam)
			full := rules.FormatFamily(fp.before, fam)
			if b == backend.NFTables {
				// The newest layout DNATs in the service chain (no endpoint
				// chains without session affinity): one chain is refilled.
				if strings.Count(text, "delete chain ") != 0 || strings.Count(text, "add chain ") != 0 || strings.Count(text, "flush chain ") != 1 ||
					!strings.Contains(text, movedAddr(fam).String()) {
					t.Errorf("%s %s: want one refilled service chain naming the moved endpoint, no chain added or deleted:\n%s", b, fam, text)
				}
				continue
			}
			if strings.Count(text, "\n-X KUBE-SEP-") != 1 || !strings.Contains(text, ":KUBE-SERVICES - [0:0]") {
				t.Errorf("%s %s: want KUBE-SERVICES rewritten and one old KUBE-SEP chain deleted:\n%s", b, fam, text)
			}
			if strings.Count(text, ":KUBE-SVC-") != 1 || countRules(text) >= countRules(full)/2 {
				t.Errorf("%s %s: a partial sync of one service rewrote too much (%d of %d rules)", b, fam, countRules(text), countRules(full))
			}
		}
	}
}
