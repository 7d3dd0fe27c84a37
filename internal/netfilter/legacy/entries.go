// Package legacy reads iptables-legacy tables in-process through the
// legacy xtables socket API (linux/netfilter_ipv4/ip_tables.h,
// netfilter_ipv6/ip6_tables.h, netfilter/x_tables.h): the blobs
// IPT_SO_GET_INFO and IPT_SO_GET_ENTRIES return, the same data
// iptables-legacy-save reads, without exec'ing it (ReadTables, ChainNames).
// Every offset in a blob comes from the kernel (or a fuzzer), so each is
// bounds-checked before use.
package legacy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"
)

const (
	tableNameLen = 32 // XT_TABLE_MAXNAMELEN
	extNameLen   = 29 // XT_EXTENSION_MAXNAMELEN
	// extHdrLen is sizeof(struct xt_entry_match) and of struct
	// xt_entry_target: u16 size, name, u8 revision, padded to 8 by the
	// kernel-side pointer in their unions.
	extHdrLen    = 32
	errorNameLen = 30 // XT_FUNCTION_MAXNAMELEN, struct xt_error_target
	commentLen   = 256

	// struct ipt_getinfo: name, valid_hooks, hook_entry[5], underflow[5],
	// num_entries, size.
	numHooks = 5
	infoLen  = tableNameLen + 4 + numHooks*4 + numHooks*4 + 4 + 4
)

// Layout is where struct ipt_entry / ip6t_entry keep their fields.
type Layout struct {
	targetOffsetAt int // __u16 target_offset
	nextOffsetAt   int // __u16 next_offset
	minSize        int // sizeof(struct ipt_entry)
}

var (
	// struct ipt_ip is 84 bytes; the entry adds nfcache, target_offset,
	// next_offset, comefrom and 8-aligned counters: 112. struct ip6t_ip6
	// is 136: 168. A goto (IPT_F_GOTO in ip.flags) is a jump all the
	// same to a reader that wants only the target chain.
	IPv4 = Layout{targetOffsetAt: 88, nextOffsetAt: 90, minSize: 112}
	IPv6 = Layout{targetOffsetAt: 140, nextOffsetAt: 142, minSize: 168}
)

// getEntriesHdr is sizeof(struct ipt_get_entries) without the entries: the
// name, the size, then padding up to the 64-bit counters' alignment.
var getEntriesHdr = (tableNameLen + 4 + int(unsafe.Alignof(uint64(0))) - 1) / int(unsafe.Alignof(uint64(0))) * int(unsafe.Alignof(uint64(0)))

// Entry is one decoded struct ipt_entry.
type Entry struct {
	Offset int    // from the start of the blob: jump verdicts are such offsets
	Size   int    // next_offset
	Target string // "" is the standard target (a verdict), "ERROR" a chain head
	// Verdict is a standard target's verdict: >= 0 a jump offset, < 0
	// -NF_ACCEPT-1 and so on. Valid only when HasVerdict.
	Verdict    int32
	HasVerdict bool
	// ErrorName is an ERROR target's data: a user chain's name, or
	// "ERROR" for the table's closing entry.
	ErrorName string

	matches []byte // the xt_entry_match records
	target  []byte // the xt_entry_target record
}

// Walk calls fn for each entry of blob in order. It stops at the first
// malformed entry with an error naming its offset.
func Walk(blob []byte, l Layout, fn func(Entry) error) error {
	return walk(blob, l, fn, nil)
}

// walk is Walk that calls free(off) after each entry: fn is done with
// blob[:off] (an Entry's slices do not outlive fn).
func walk(blob []byte, l Layout, fn func(Entry) error, free func(off int)) error {
	// A table has a few target names and up to a hundred thousand entries:
	// each name is made a string once.
	names := map[string]string{}
	for off := 0; off < len(blob); {
		if len(blob)-off < l.minSize {
			return fmt.Errorf("legacy table blob truncated at offset %d", off)
		}
		e := blob[off:]
		targetAt := int(binary.NativeEndian.Uint16(e[l.targetOffsetAt:]))
		next := int(binary.NativeEndian.Uint16(e[l.nextOffsetAt:]))
		if next < l.minSize || next > len(e) || targetAt < l.minSize || targetAt+extHdrLen > next {
			return fmt.Errorf("legacy table blob has a bad entry at offset %d", off)
		}
		target := e[targetAt:next]
		ent := Entry{
			Offset:  off,
			Size:    next,
			Target:  intern(names, target[2:2+extNameLen]),
			matches: e[l.minSize:targetAt],
			target:  target,
		}
		switch ent.Target {
		case "":
			if len(target) >= extHdrLen+4 {
				ent.Verdict = int32(binary.NativeEndian.Uint32(target[extHdrLen:]))
				ent.HasVerdict = true
			}
		case "ERROR":
			if len(target) >= extHdrLen+errorNameLen {
				ent.ErrorName = cString(target[extHdrLen : extHdrLen+errorNameLen])
			}
		}
		if err := fn(ent); err != nil {
			return err
		}
		off += next
		if free != nil {
			free(off)
		}
	}
	return nil
}

// Comment returns the data of the entry's first "comment" match
// (struct xt_comment_info: char comment[256]), or "".
func (e Entry) Comment() string {
	for m := e.matches; len(m) >= extHdrLen; {
		size := int(binary.NativeEndian.Uint16(m))
		if size < extHdrLen || size > len(m) {
			return "" // malformed: the kernel never writes this
		}
		if cString(m[2:2+extNameLen]) == "comment" {
			data := m[extHdrLen:size]
			return cString(data[:min(len(data), commentLen)])
		}
		m = m[size:]
	}
	return ""
}

// UserChains returns the user-defined chain names of a table blob, in
// blob order: each starts with an ERROR entry whose data is its name; the
// blob ends with an ERROR entry named "ERROR".
func UserChains(blob []byte, l Layout) ([]string, error) {
	var chains []string
	err := Walk(blob, l, func(e Entry) error {
		if e.Target == "ERROR" && e.ErrorName != "" && e.ErrorName != "ERROR" {
			chains = append(chains, e.ErrorName)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return chains, nil
}

// intern returns the C string in b, the same string for the same bytes.
func intern(names map[string]string, b []byte) string {
	if b[0] == 0 {
		return "" // the standard target, most entries': no lookup
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if s, ok := names[string(b)]; ok {
		return s
	}
	s := string(b)
	names[s] = s
	return s
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
