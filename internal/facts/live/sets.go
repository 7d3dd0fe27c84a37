package live

import (
	"context"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// maxUserdataSets bounds the set dump: a firewall with thousands of named
// sets is plausible, a million is not, and the list goes into the facts.
const maxUserdataSets = 20000

// ForeignUserdataSets lists the sets carrying user data in every table
// kube-proxy does not own (any family; kube-proxy's own ip and ip6
// kube-proxy tables are written by its image's nft, which reads its own
// sets). It reads the running kernel: call it on the real host only.
// While nf_tables is not loaded there are none, and the kernel is not
// asked (netfilter.NFTablesAbsent).
func ForeignUserdataSets(ctx context.Context) ([]skew.UserdataSet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if netfilter.NFTablesAbsent(hostfs.New("/")) != "" {
		return []skew.UserdataSet{}, nil // no set can exist, and asking would load nf_tables
	}
	conn, err := nl.Dial()
	if err != nil {
		return nil, fmt.Errorf("opening a netfilter netlink socket: %w", err)
	}
	defer conn.Close()
	sets, err := conn.DumpSetUserdata(maxUserdataSets)
	if err != nil {
		return nil, fmt.Errorf("listing nftables sets: %w", err)
	}
	out := []skew.UserdataSet{}
	for _, s := range sets {
		fam := nl.FamilyName(s.Family)
		if s.Table == vocab.NFTablesTable && (fam == "ip" || fam == "ip6") {
			continue
		}
		out = append(out, skew.UserdataSet{Family: fam, Table: s.Table, Name: s.Name, Kinds: s.Kinds})
	}
	return out, nil
}
