//go:build linux

package facts

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The legacy xtables socket API (linux/netfilter_ipv4/ip_tables.h and
// netfilter_ipv6/ip6_tables.h): the same calls iptables-legacy-save makes,
// without exec'ing it. Only GET calls on tables that already exist, so
// nothing is created or changed.
const (
	soGetInfo    = 64 // IPT_SO_GET_INFO, IP6T_SO_GET_INFO
	soGetEntries = 65 // IPT_SO_GET_ENTRIES, IP6T_SO_GET_ENTRIES

	tableNameLen  = 32 // XT_TABLE_MAXNAMELEN
	targetNameLen = 29 // XT_EXTENSION_MAXNAMELEN
	targetHdrLen  = 32 // sizeof(struct xt_entry_target)
	errorNameLen  = 30 // XT_FUNCTION_MAXNAMELEN

	// struct ipt_getinfo: name, valid_hooks, hook_entry[5], underflow[5],
	// num_entries, size.
	getInfoLen    = tableNameLen + 4 + 5*4 + 5*4 + 4 + 4
	getInfoSizeAt = getInfoLen - 4
)

// entryLayout is where struct ipt_entry / ip6t_entry keep their offsets.
type entryLayout struct {
	targetOffsetAt int // __u16 target_offset
	nextOffsetAt   int // __u16 next_offset
	minSize        int // sizeof(struct ipt_entry)
}

var (
	ipv4Entry = entryLayout{targetOffsetAt: 88, nextOffsetAt: 90, minSize: 112}
	ipv6Entry = entryLayout{targetOffsetAt: 140, nextOffsetAt: 142, minSize: 168}
)

// getEntriesHdr is sizeof(struct ipt_get_entries) without the entries: the
// name, the size, then padding up to the 64-bit counters' alignment.
var getEntriesHdr = (tableNameLen + 4 + int(unsafe.Alignof(uint64(0))) - 1) / int(unsafe.Alignof(uint64(0))) * int(unsafe.Alignof(uint64(0)))

// legacyChains returns the user-defined chain names of one legacy table.
func legacyChains(table string, ipv6 bool) ([]string, error) {
	family, level, layout := unix.AF_INET, unix.SOL_IP, ipv4Entry
	if ipv6 {
		family, level, layout = unix.AF_INET6, unix.SOL_IPV6, ipv6Entry
	}
	fd, err := unix.Socket(family, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
	if err != nil {
		return nil, fmt.Errorf("open raw socket for legacy table %s: %w", table, err)
	}
	defer unix.Close(fd)

	// The table may change between the two calls (EAGAIN); a few tries are plenty.
	for range 5 {
		info := make([]byte, getInfoLen)
		copy(info, table)
		if err := getsockopt(fd, level, soGetInfo, info); err != nil {
			return nil, fmt.Errorf("read legacy table %s info: %w", table, err)
		}
		size := int(binary.NativeEndian.Uint32(info[getInfoSizeAt:]))
		buf := make([]byte, getEntriesHdr+size)
		copy(buf, table)
		binary.NativeEndian.PutUint32(buf[tableNameLen:], uint32(size))
		err := getsockopt(fd, level, soGetEntries, buf)
		if errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read legacy table %s entries: %w", table, err)
		}
		return parseLegacyEntries(buf[getEntriesHdr:], layout)
	}
	return nil, fmt.Errorf("read legacy table %s: it kept changing while being read", table)
}

func getsockopt(fd, level, opt int, buf []byte) error {
	n := uint32(len(buf))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// parseLegacyEntries walks a table blob: each user chain starts with an
// entry whose target is ERROR and whose data is the chain name; the blob
// ends with an ERROR entry named "ERROR".
func parseLegacyEntries(blob []byte, l entryLayout) ([]string, error) {
	var chains []string
	for off := 0; off < len(blob); {
		if len(blob)-off < l.minSize {
			return nil, fmt.Errorf("legacy table blob truncated at offset %d", off)
		}
		e := blob[off:]
		targetAt := int(binary.NativeEndian.Uint16(e[l.targetOffsetAt:]))
		next := int(binary.NativeEndian.Uint16(e[l.nextOffsetAt:]))
		if next < l.minSize || next > len(e) || targetAt < l.minSize || targetAt+targetHdrLen > next {
			return nil, fmt.Errorf("legacy table blob has a bad entry at offset %d", off)
		}
		target := e[targetAt:next]
		if cString(target[2:2+targetNameLen]) == "ERROR" && len(target) >= targetHdrLen+errorNameLen {
			if name := cString(target[targetHdrLen : targetHdrLen+errorNameLen]); name != "ERROR" {
				chains = append(chains, name)
			}
		}
		off += next
	}
	return chains, nil
}

func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
