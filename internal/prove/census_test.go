package prove

import (
	"slices"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
)

// Every state watch offers its Node carries the last census, once there
// is one; without census rounds the offer is left alone.
func TestOffersCarryTheCensus(t *testing.T) {
	var got []string
	cl := cluster{offer: func(s proof.State) { got = append(got, s.LegacyFree) }}
	r := &censusRounds{}
	withC := cl.withCensus(r)
	withC.offer(proof.State{})
	r.last = "no; namespaces=1; host"
	withC.offer(proof.State{})
	cl.withCensus(nil).offer(proof.State{LegacyFree: "kept"})
	if !slices.Equal(got, []string{"", "no; namespaces=1; host", "kept"}) {
		t.Errorf("offered %q", got)
	}
}
