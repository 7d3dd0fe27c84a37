package netfilter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// iptablesNFTTables are the tables iptables-nft creates in nftables.
var iptablesNFTTables = []string{"filter", "nat", "mangle", "raw", "security"}

// nativeTable is the table kube-proxy's nftables mode owns per family.
const nativeTable = "kube-proxy"

// readNetlink reads the iptables-nft or native nftables tables of both
// families over one netlink connection: one dump each of tables, chains,
// sets and rules, one element dump per set. The generation id is read
// before and after; if another process committed in between, the read is
// repeated so the result is one consistent ruleset.
func readNetlink(ctx context.Context, b backend.Backend) (*rules.Ruleset, error) {
	conn, err := dialNetfilter()
	if err != nil {
		return nil, wrapNetlink(b, "opening a netfilter netlink socket", err)
	}
	defer conn.Close()
	want := func(name string) bool { return name == nativeTable }
	if b == backend.IptablesNFT {
		want = func(name string) bool { return slices.Contains(iptablesNFTTables, name) }
	}
	for attempt := 0; attempt < 5; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		before, err := generation(conn)
		if err != nil {
			return nil, wrapNetlink(b, "reading the ruleset generation", err)
		}
		d, err := dumpTables(conn, want)
		if errors.Is(err, errDumpInterrupted) {
			continue
		}
		if err != nil {
			return nil, wrapNetlink(b, "dumping nftables", err)
		}
		after, err := generation(conn)
		if err != nil {
			return nil, wrapNetlink(b, "reading the ruleset generation", err)
		}
		if before == after {
			return buildRuleset(b, d), nil
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

func request(conn *nlConn, msgType uint16, flags netlink.HeaderFlags, family byte, as []netlink.Attribute) ([]netlink.Message, error) {
	return conn.execute(msgType, flags, family, as)
}

func generation(conn *nlConn) (uint32, error) {
	msgs, err := request(conn, unix.NFT_MSG_GETGEN, 0, unix.AF_UNSPEC, nil)
	if err != nil {
		return 0, err
	}
	for _, m := range msgs {
		_, body, err := payload(m)
		if err != nil {
			return 0, err
		}
		as, err := attrs(body)
		if err != nil {
			return 0, err
		}
		for _, a := range as {
			if a.Type == unix.NFTA_GEN_ID {
				return be32(a.Data), nil
			}
		}
	}
	return 0, errors.New("no generation id in the kernel's reply")
}

// nlDump is everything read from the kernel for the wanted tables.
type nlDump struct {
	tables []nlTable
	chains []nlChain
	sets   []nlSet
	rules  []nlRule
}

var families = []byte{unix.NFPROTO_IPV4, unix.NFPROTO_IPV6}

// dumpTables reads the wanted tables. Sets and rules are dumped per table:
// the kernel resumes each dump chunk by walking the dump from its start,
// skipping other tables cheaply, so per-table dumps keep that walk short.
func dumpTables(conn *nlConn, want func(string) bool) (*nlDump, error) {
	d := &nlDump{}
	msgs, err := request(conn, unix.NFT_MSG_GETTABLE, netlink.Dump, unix.AF_UNSPEC, nil)
	if err != nil {
		return nil, fmt.Errorf("tables: %w", err)
	}
	for _, m := range msgs {
		t, err := decodeTable(m)
		if err != nil {
			return nil, fmt.Errorf("table: %w", err)
		}
		if slices.Contains(families, t.family) && want(t.name) {
			d.tables = append(d.tables, t)
		}
	}
	if len(d.tables) == 0 {
		return d, nil
	}
	// The kernel ignores a table filter on chain dumps: dump them all once.
	msgs, err = request(conn, unix.NFT_MSG_GETCHAIN, netlink.Dump, unix.AF_UNSPEC, nil)
	if err != nil {
		return nil, fmt.Errorf("chains: %w", err)
	}
	for _, m := range msgs {
		c, err := decodeChain(m)
		if err != nil {
			return nil, fmt.Errorf("chain: %w", err)
		}
		if slices.ContainsFunc(d.tables, func(t nlTable) bool { return t.family == c.family && t.name == c.table }) {
			d.chains = append(d.chains, c)
		}
	}
	for _, t := range d.tables {
		if err := dumpTable(conn, t, d); err != nil {
			return nil, fmt.Errorf("table %s %s: %w", familyOf(t.family), t.name, err)
		}
	}
	return d, nil
}

func dumpTable(conn *nlConn, t nlTable, d *nlDump) error {
	name := append([]byte(t.name), 0)
	msgs, err := request(conn, unix.NFT_MSG_GETSET, netlink.Dump, t.family, []netlink.Attribute{{Type: unix.NFTA_SET_TABLE, Data: name}})
	if err != nil {
		return fmt.Errorf("sets: %w", err)
	}
	first := len(d.sets)
	for _, m := range msgs {
		s, err := decodeSet(m)
		if err != nil {
			return fmt.Errorf("set: %w", err)
		}
		if s.table == t.name {
			d.sets = append(d.sets, s)
		}
	}
	for i := first; i < len(d.sets); i++ {
		s := &d.sets[i]
		msgs, err := request(conn, unix.NFT_MSG_GETSETELEM, netlink.Dump, s.family, []netlink.Attribute{
			{Type: unix.NFTA_SET_ELEM_LIST_TABLE, Data: name},
			{Type: unix.NFTA_SET_ELEM_LIST_SET, Data: append([]byte(s.name), 0)},
		})
		if err != nil {
			return fmt.Errorf("elements of set %s: %w", s.name, err)
		}
		for _, m := range msgs {
			if err := decodeElems(m, s); err != nil {
				return err
			}
		}
	}
	msgs, err = request(conn, unix.NFT_MSG_GETRULE, netlink.Dump, t.family, []netlink.Attribute{{Type: unix.NFTA_RULE_TABLE, Data: name}})
	if err != nil {
		return fmt.Errorf("rules: %w", err)
	}
	for _, m := range msgs {
		r, err := decodeRule(m)
		if err != nil {
			return fmt.Errorf("rule: %w", err)
		}
		if r.table == t.name {
			d.rules = append(d.rules, r)
		}
	}
	return nil
}

func familyOf(f byte) rules.Family {
	if f == unix.NFPROTO_IPV6 {
		return rules.IPv6
	}
	return rules.IPv4
}

// buildRuleset turns the dump into the model, rendering each rule as
// iptables-save text (iptables-nft) or nft text (nftables).
func buildRuleset(b backend.Backend, d *nlDump) *rules.Ruleset {
	rs := &rules.Ruleset{Backend: b}
	type key struct {
		fam         byte
		table, name string
	}
	tableIdx := map[key]int{}
	for _, t := range d.tables {
		tableIdx[key{t.family, t.name, ""}] = len(rs.Tables)
		rs.Tables = append(rs.Tables, rules.Table{Family: familyOf(t.family), Name: t.name, Comment: t.comment})
	}
	chainIdx := map[key]int{}
	for _, c := range d.chains {
		ti, ok := tableIdx[key{c.family, c.table, ""}]
		if !ok {
			continue
		}
		t := &rs.Tables[ti]
		chainIdx[key{c.family, c.table, c.name}] = len(t.Chains)
		ch := rules.Chain{Name: c.name, Comment: c.comment}
		if c.hasHook {
			ch.Hook, ch.Type, ch.Priority, ch.Policy = c.hook, c.typ, int(c.priority), c.policy
			if b == backend.IptablesNFT {
				// iptables names base chains by their hook and shows only
				// the policy: type and priority are fixed per table.
				ch.Type, ch.Priority = "", 0
				ch.Policy = map[string]string{"accept": "ACCEPT", "drop": "DROP"}[c.policy]
			}
		}
		t.Chains = append(t.Chains, ch)
	}
	if b == backend.IptablesNFT {
		addBuiltinChains(rs)
	}
	sets := map[key]*nlSet{}
	for i := range d.sets {
		s := &d.sets[i]
		sets[key{s.family, s.table, s.name}] = s
		ti, ok := tableIdx[key{s.family, s.table, ""}]
		if !ok || s.flags&unix.NFT_SET_ANONYMOUS != 0 {
			continue // anonymous sets are printed inline in their rule
		}
		rs.Tables[ti].Sets = append(rs.Tables[ti].Sets, setModel(s))
	}
	for _, r := range d.rules {
		ti, ok := tableIdx[key{r.family, r.table, ""}]
		if !ok {
			continue
		}
		ci, ok := chainIdx[key{r.family, r.table, r.chain}]
		if !ok {
			continue
		}
		lookup := func(name string) *nlSet { return sets[key{r.family, r.table, name}] }
		var rule rules.Rule
		if b == backend.IptablesNFT {
			rule = xtRule(r, func(n string) bool { _, ok := chainIdx[key{r.family, r.table, n}]; return ok })
		} else {
			rule = nftRule(r, lookup)
		}
		c := &rs.Tables[ti].Chains[ci]
		c.Rules = append(c.Rules, rule)
	}
	return rs
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
