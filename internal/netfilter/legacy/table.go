package legacy

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// hookChains names the built-in chains by hook number (NF_INET_PRE_ROUTING
// and so on), the order of ipt_getinfo's hook_entry and underflow.
var hookChains = [numHooks]string{"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}

// Standard verdicts (-NF_DROP-1, -NF_ACCEPT-1, ...) a policy can have.
var policies = map[int32]string{-1: "DROP", -2: "ACCEPT", -4: "QUEUE", -5: "RETURN"}

// DecodeInfo decodes struct ipt_getinfo (the same for IPv6).
func DecodeInfo(raw []byte) (Info, error) {
	if len(raw) < infoLen {
		return Info{}, fmt.Errorf("legacy table info is %d bytes, want %d", len(raw), infoLen)
	}
	u := func(at int) uint32 { return binary.NativeEndian.Uint32(raw[at:]) }
	info := Info{ValidHooks: u(tableNameLen)}
	for h := range numHooks {
		info.HookEntry[h] = u(tableNameLen + 4 + 4*h)
		info.Underflow[h] = u(tableNameLen + 4 + 4*numHooks + 4*h)
	}
	info.NumEntries = u(infoLen - 8)
	info.Size = u(infoLen - 4)
	return info, nil
}

// Info is struct ipt_getinfo: which hooks the table has and where each
// built-in chain starts (HookEntry) and keeps its policy (Underflow).
type Info struct {
	ValidHooks uint32
	HookEntry  [numHooks]uint32
	Underflow  [numHooks]uint32
	NumEntries uint32
	Size       uint32
}

// Table builds the rules.Table of one blob the way iptables-save shows it:
// chains in blob order with built-in policies, one rule per entry except
// chain heads (ERROR), built-in policies (underflow) and each user chain's
// closing RETURN. Rules carry Jump and Comment only, marked NotRead; rules
// of chains skip names are only counted (NotRead, nothing else), and share
// one backing array: callers must not change them in place.
func Table(name string, fam rules.Family, info Info, blob []byte, l Layout, skip func(chain string) bool) (rules.Table, error) {
	return table(name, fam, info, blob, l, skip, nil)
}

// table is Table that calls free(n) once it is done with blob[:n].
func table(name string, fam rules.Family, info Info, blob []byte, l Layout, skip func(chain string) bool, free func(int)) (rules.Table, error) {
	d := decoder{t: rules.Table{Family: fam, Name: name}, info: info, skip: skip, cur: -1, hook: -1}
	for h := range numHooks {
		if info.ValidHooks&(1<<h) != 0 {
			if d.hookAt == nil {
				d.hookAt = map[int]int{}
			}
			d.hookAt[int(info.HookEntry[h])] = h
		}
	}
	// Sized once: a large table has tens of thousands of chains, and
	// growing by appends would leave each smaller copy behind as garbage.
	heads := countHeads(blob, l) + numHooks
	d.t.Chains = make([]rules.Chain, 0, heads)
	d.heads = make([]head, 0, heads)
	if err := walk(blob, l, d.entry, free); err != nil {
		return rules.Table{}, fmt.Errorf("legacy table %s: %w", name, err)
	}
	if !d.done {
		return rules.Table{}, fmt.Errorf("legacy table %s: no closing ERROR entry", name)
	}
	for _, j := range d.jumps {
		d.t.Chains[j.chain].Rules[j.rule].Jump = d.chainAt(j.to) // "" if no chain starts there
	}
	return d.t, nil
}

type jump struct{ chain, rule, to int }

// head is where a chain's first entry is.
type head struct {
	off  int
	name string
}

type decoder struct {
	t      rules.Table
	info   Info
	skip   func(string) bool
	hookAt map[int]int  // entry offset -> hook whose built-in chain starts there
	heads  []head       // each chain's first entry, in blob order
	jumps  []jump       // resolved once every chain's start is known
	all    []rules.Rule // the rules of every chain read so far, but skipped ones
	first  int          // index in all of the current chain's first rule
	n      int          // how many rules the current chain has so far
	cur    int          // index of the chain being read, -1 between chains
	hook   int          // its hook, -1 for a user chain
	user   bool         // the current chain is a user chain (ends with RETURN)
	skipC  bool         // the current chain's rules are only counted
	done   bool
	// notRead backs every skipped chain's rules: they are all alike.
	notRead []rules.Rule
}

func (d *decoder) entry(e Entry) error {
	if d.done {
		return fmt.Errorf("entry at offset %d follows the closing ERROR entry", e.Offset)
	}
	if h, ok := d.hookAt[e.Offset]; ok {
		if err := d.endUser(); err != nil {
			return err
		}
		d.start(rules.Chain{Name: hookChains[h], Hook: strings.ToLower(hookChains[h])}, e.Offset, h, false)
	}
	if e.Target == "ERROR" {
		if err := d.endUser(); err != nil {
			return err
		}
		if d.cur >= 0 {
			return fmt.Errorf("built-in chain %s has no policy before offset %d", d.t.Chains[d.cur].Name, e.Offset)
		}
		if e.ErrorName == "ERROR" {
			d.done = true
			return nil
		}
		if e.ErrorName == "" {
			return fmt.Errorf("chain head at offset %d has no name", e.Offset)
		}
		d.start(rules.Chain{Name: e.ErrorName}, e.Offset+e.Size, -1, true)
		return nil
	}
	if d.cur < 0 {
		return fmt.Errorf("entry at offset %d belongs to no chain", e.Offset)
	}
	c := &d.t.Chains[d.cur]
	if d.hook >= 0 && e.Offset == int(d.info.Underflow[d.hook]) {
		p, ok := policies[e.Verdict]
		if e.Target != "" || !e.HasVerdict || !ok {
			return fmt.Errorf("built-in chain %s has no standard policy at offset %d", c.Name, e.Offset)
		}
		c.Policy = p
		d.end()
		return nil
	}
	d.n++
	if d.skipC {
		return nil
	}
	d.all = append(d.all, rules.Rule{NotRead: true, Comment: e.Comment()})
	// A standard verdict >= 0 is the offset of the entry to go on at: a
	// chain's first entry for a jump, the next entry for a rule with no
	// target.
	if e.Target == "" && e.HasVerdict && e.Verdict >= 0 && int(e.Verdict) != e.Offset+e.Size {
		d.jumps = append(d.jumps, jump{chain: d.cur, rule: len(d.all) - 1 - d.first, to: int(e.Verdict)})
	}
	return nil
}

func (d *decoder) start(c rules.Chain, first, hook int, user bool) {
	d.cur, d.hook, d.user, d.first, d.n = len(d.t.Chains), hook, user, len(d.all), 0
	d.skipC = d.skip != nil && d.skip(c.Name)
	// Offsets only grow in blob order; a chain starting where another
	// (empty) one did takes its place, as the later name always has.
	if n := len(d.heads); n > 0 && d.heads[n-1].off == first {
		d.heads[n-1].name = c.Name
	} else {
		d.heads = append(d.heads, head{first, c.Name})
	}
	d.t.Chains = append(d.t.Chains, c)
}

// chainAt returns the name of the chain whose first entry is at off, or "".
func (d *decoder) chainAt(off int) string {
	i, ok := slices.BinarySearchFunc(d.heads, off, func(h head, off int) int { return cmp.Compare(h.off, off) })
	if !ok {
		return ""
	}
	return d.heads[i].name
}

// endUser closes the current user chain: its last entry is the RETURN
// that ends every user chain, which iptables-save does not print.
func (d *decoder) endUser() error {
	if d.cur < 0 || !d.user {
		return nil
	}
	if d.n == 0 {
		return fmt.Errorf("user chain %s has no closing RETURN entry", d.t.Chains[d.cur].Name)
	}
	d.n--
	if !d.skipC {
		d.all = d.all[:len(d.all)-1]
		if n := len(d.jumps); n > 0 && d.jumps[n-1].chain == d.cur && d.jumps[n-1].rule == len(d.all)-d.first {
			d.jumps = d.jumps[:n-1]
		}
	}
	d.end()
	return nil
}

// end gives the current chain its rules, capped so that nothing appended
// later can reach them. An empty chain keeps nil rules, as the save parser leaves it.
func (d *decoder) end() {
	switch {
	case d.n == 0:
	case d.skipC:
		if len(d.notRead) < d.n {
			d.notRead = make([]rules.Rule, max(d.n, 2*len(d.notRead)))
			for i := range d.notRead {
				d.notRead[i].NotRead = true
			}
		}
		d.t.Chains[d.cur].Rules = d.notRead[:d.n:d.n]
	default:
		d.t.Chains[d.cur].Rules = d.all[d.first:len(d.all):len(d.all)]
	}
	d.cur = -1
}

// countHeads counts a blob's chain heads (ERROR entries), as far as the
// blob is well formed: walk reports where it is not.
func countHeads(blob []byte, l Layout) int {
	n := 0
	for off := 0; len(blob)-off >= l.minSize; {
		e := blob[off:]
		targetAt := int(binary.NativeEndian.Uint16(e[l.targetOffsetAt:]))
		next := int(binary.NativeEndian.Uint16(e[l.nextOffsetAt:]))
		if next < l.minSize || next > len(e) || targetAt < l.minSize || targetAt+extHdrLen > next {
			break
		}
		if bytes.Equal(e[targetAt+2:targetAt+2+len("ERROR")+1], []byte("ERROR\x00")) {
			n++
		}
		off += next
	}
	return n
}
