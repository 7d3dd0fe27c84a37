package netfilter

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nfttext"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// readNetlink reads the iptables-nft or native nftables tables of both
// families over netlink: one dump each of tables and chains, per table
// one of sets, one element dump per set (dynamic sets excepted: their
// elements are runtime state; in a shallow read, only those of o.ReadSets),
// one rule dump per chain over up to one socket per CPU
// (nl.DumpChainRules; the rules of chains o skips are only counted, see
// dumpRules). Each message is decoded as it arrives and
// rules are rendered at once, so no raw dump is held in memory. The
// generation id is read before and after; if another process committed
// in between, the read is repeated so the result is one consistent
// ruleset.
func readNetlink(ctx context.Context, b backend.Backend, o ReadOptions) (*rules.Ruleset, error) {
	conn, err := nl.Dial()
	if err != nil {
		return nil, wrapNetlink(b, "opening a netfilter netlink socket", err)
	}
	defer conn.Close()
	want := func(name string) bool { return name == vocab.NFTablesTable }
	if b == backend.IptablesNFT {
		want = vocab.IsIptablesTable
	}
	for attempt := 0; attempt < 5; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		before, err := conn.Generation()
		if err != nil {
			return nil, wrapNetlink(b, "reading the ruleset generation", err)
		}
		rs, err := dumpTables(conn, b, want, o)
		if errors.Is(err, nl.ErrDumpInterrupted) {
			continue
		}
		if err != nil {
			return nil, wrapNetlink(b, "dumping nftables", err)
		}
		after, err := conn.Generation()
		if err != nil {
			return nil, wrapNetlink(b, "reading the ruleset generation", err)
		}
		if before == after {
			if b == backend.IptablesNFT {
				addBuiltinChains(rs)
			}
			return rs, nil
		}
	}
	return nil, fmt.Errorf("reading %s rules: the ruleset kept changing during 5 reads; retry when kube-proxy is idle", b)
}

func wrapNetlink(b backend.Backend, what string, err error) error {
	if errors.Is(err, os.ErrPermission) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return &PermissionError{Backend: b, Err: fmt.Errorf("%s: %w", what, err)}
	}
	return fmt.Errorf("reading %s rules: %s: %w", b, what, err)
}

var families = []byte{unix.NFPROTO_IPV4, unix.NFPROTO_IPV6}

func familyOf(f byte) rules.Family {
	if f == unix.NFPROTO_IPV6 {
		return rules.IPv6
	}
	return rules.IPv4
}

// tableReader collects one table while its dumps stream in.
type tableReader struct {
	fam    byte
	table  *rules.Table
	chains map[string]int     // chain name -> index in table.Chains
	sets   map[string]*nl.Set // all sets, anonymous ones too
}

func dumpTables(conn *nl.Conn, b backend.Backend, want func(string) bool, o ReadOptions) (*rules.Ruleset, error) {
	var skip func(string) bool
	switch {
	case o.Shallow && b == backend.IptablesNFT:
		skip = o.SkipChain
	case o.Shallow && b == backend.NFTables:
		skip = o.SkipNFTablesChain
	}
	rs, readers, err := dumpSkeleton(conn, b, want, true)
	if err != nil {
		return nil, err
	}
	for _, r := range readers {
		if err := r.dumpSets(conn, o); err != nil {
			return nil, fmt.Errorf("table %s %s: %w", familyOf(r.fam), r.table.Name, err)
		}
		if b != backend.NFTables {
			continue // iptables-nft writes no named counters
		}
		if err := r.dumpCounters(conn); err != nil {
			return nil, fmt.Errorf("table %s %s: %w", familyOf(r.fam), r.table.Name, err)
		}
	}
	if err := dumpRules(conn, b, readers, o.Shallow, skip); err != nil {
		return nil, err
	}
	return rs, nil
}

// dumpSkeleton reads the ip and ip6 tables want accepts and, withChains,
// their chains (no rules, sets or elements): one table dump and one chain
// dump. The readers then dump each table's content.
func dumpSkeleton(conn *nl.Conn, b backend.Backend, want func(string) bool, withChains bool) (*rules.Ruleset, []*tableReader, error) {
	rs := &rules.Ruleset{Backend: b}
	var readers []*tableReader
	err := conn.Execute(unix.NFT_MSG_GETTABLE, netlink.Dump, unix.AF_UNSPEC, nil, func(m netlink.Message) error {
		t, err := nl.DecodeTable(m)
		if err != nil {
			return fmt.Errorf("table: %w", err)
		}
		if slices.Contains(families, t.Family) && want(t.Name) {
			rs.Tables = append(rs.Tables, rules.Table{Family: familyOf(t.Family), Name: t.Name, Comment: t.Comment})
			readers = append(readers, &tableReader{fam: t.Family, chains: map[string]int{}, sets: map[string]*nl.Set{}})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(readers) == 0 || !withChains {
		return rs, readers, nil
	}
	for i, r := range readers {
		r.table = &rs.Tables[i]
	}
	// The kernel ignores a table filter on chain dumps: dump them all once.
	err = conn.Execute(unix.NFT_MSG_GETCHAIN, netlink.Dump, unix.AF_UNSPEC, nil, func(m netlink.Message) error {
		c, err := nl.DecodeChain(m)
		if err != nil {
			return fmt.Errorf("chain: %w", err)
		}
		for _, r := range readers {
			if r.fam == c.Family && r.table.Name == c.Table {
				r.addChain(b, c)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("chains: %w", err)
	}
	return rs, readers, nil
}

func (r *tableReader) addChain(b backend.Backend, c nl.Chain) {
	ch := rules.Chain{Name: c.Name, Comment: c.Comment}
	if c.HasHook {
		ch.Hook, ch.Type, ch.Priority, ch.Policy = c.Hook, c.Type, int(c.Priority), c.Policy
		if b == backend.IptablesNFT {
			// iptables names base chains by their hook and shows only
			// the policy: type and priority are fixed per table.
			ch.Type, ch.Priority = "", 0
			ch.Policy = map[string]string{"accept": "ACCEPT", "drop": "DROP"}[c.Policy]
		}
	}
	r.chains[c.Name] = len(r.table.Chains)
	r.table.Chains = append(r.table.Chains, ch)
}

// dumpSets reads the table's sets and their elements (rules: dumpRules).
func (r *tableReader) dumpSets(conn *nl.Conn, o ReadOptions) error {
	name := append([]byte(r.table.Name), 0)
	var order []*nl.Set
	err := conn.Execute(unix.NFT_MSG_GETSET, netlink.Dump, r.fam, []netlink.Attribute{{Type: unix.NFTA_SET_TABLE, Data: name}}, func(m netlink.Message) error {
		s, err := nl.DecodeSet(m)
		if err != nil {
			return fmt.Errorf("set: %w", err)
		}
		if s.Table == r.table.Name {
			r.sets[s.Name] = &s
			order = append(order, &s)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("sets: %w", err)
	}
	for _, s := range order {
		var jumps []string
		switch {
		case s.Flags&unix.NFT_SET_ANONYMOUS == 0 && s.Flags&unix.NFT_SET_MAP != 0 && o.readsJumps(s.Name):
			s.NotRead = true
			if jumps, err = r.dumpJumps(conn, s.Name); err != nil {
				return err
			}
		case o.Shallow:
			// Sets are checked by name only; their elements, one
			// dump per set, were most of a shallow read's memory.
			s.NotRead = true
			if s.Flags&unix.NFT_SET_ANONYMOUS != 0 {
				continue // its rule shows the not-read marker inline
			}
		case s.Flags&unix.NFT_SET_EVAL != 0:
			// A dynamic set's elements (kube-proxy's session-affinity
			// entries) are written by packets and expire: runtime state
			// like counters, left out so two moments diff cleanly.
		default:
			err := conn.Execute(unix.NFT_MSG_GETSETELEM, netlink.Dump, r.fam, []netlink.Attribute{
				{Type: unix.NFTA_SET_ELEM_LIST_TABLE, Data: name},
				{Type: unix.NFTA_SET_ELEM_LIST_SET, Data: append([]byte(s.Name), 0)},
			}, func(m netlink.Message) error { return nl.DecodeElems(m, s) })
			if err != nil {
				return fmt.Errorf("elements of set %s: %w", s.Name, err)
			}
			if s.Flags&unix.NFT_SET_ANONYMOUS != 0 {
				continue // printed inline in its rule
			}
		}
		m := nfttext.SetModel(s)
		m.Jumps = jumps
		r.table.Sets = append(r.table.Sets, m)
	}
	return nil
}

// dumpJumps reads where the elements of verdict map set lead: each chain
// they jump or go to, sorted, once.
func (r *tableReader) dumpJumps(conn *nl.Conn, set string) ([]string, error) {
	seen := map[string]bool{} // keyed by chainName's strings: no copies
	err := conn.Execute(unix.NFT_MSG_GETSETELEM, netlink.Dump, r.fam, []netlink.Attribute{
		{Type: unix.NFTA_SET_ELEM_LIST_TABLE, Data: append([]byte(r.table.Name), 0)},
		{Type: unix.NFTA_SET_ELEM_LIST_SET, Data: append([]byte(set), 0)},
	}, func(m netlink.Message) error {
		return nl.ElemJumps(m, func(chain []byte) {
			if !seen[string(chain)] {
				seen[r.chainName(chain)] = true
			}
		})
	})
	if err != nil {
		return nil, fmt.Errorf("elements of map %s: %w", set, err)
	}
	var out []string // nil for none, as a full read's Elements
	for c := range seen {
		out = append(out, c)
	}
	slices.Sort(out)
	return out, nil
}

// dumpCounters reads the table's named counters (kube-proxy 1.38's
// localhost NodePort reject counters), names only: the rules counting in
// them cannot be loaded back without them.
func (r *tableReader) dumpCounters(conn *nl.Conn) error {
	name := append([]byte(r.table.Name), 0)
	err := conn.Execute(unix.NFT_MSG_GETOBJ, netlink.Dump, r.fam, []netlink.Attribute{
		{Type: unix.NFTA_OBJ_TABLE, Data: name},
		{Type: unix.NFTA_OBJ_TYPE, Data: binary.BigEndian.AppendUint32(nil, unix.NFT_OBJECT_COUNTER)},
	}, func(m netlink.Message) error {
		o, err := nl.DecodeObj(m)
		if err != nil {
			return fmt.Errorf("object: %w", err)
		}
		if o.Table == r.table.Name && o.Family == r.fam && o.Type == unix.NFT_OBJECT_COUNTER {
			r.table.Counters = append(r.table.Counters, o.Name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("named counters: %w", err)
	}
	return nil
}

// addBuiltinChains adds the built-in chains iptables-nft has not created
// yet (it creates base chains on first use) with their ACCEPT policy, as
// iptables-nft-save prints them, so both show the same text.
func addBuiltinChains(rs *rules.Ruleset) {
	for i := range rs.Tables {
		t := &rs.Tables[i]
		for _, name := range rules.BuiltinChains(t.Name) {
			if !slices.ContainsFunc(t.Chains, func(c rules.Chain) bool { return c.Name == name }) {
				t.Chains = append(t.Chains, rules.Chain{Name: name, Hook: strings.ToLower(name), Policy: "ACCEPT"})
			}
		}
	}
}
