//go:build linux

package legacy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

const (
	soGetInfo    = 64 // IPT_SO_GET_INFO, IP6T_SO_GET_INFO
	soGetEntries = 65 // IPT_SO_GET_ENTRIES, IP6T_SO_GET_ENTRIES
)

// Socket is a raw socket to make the GET calls on. Only GET calls, so
// nothing is changed; but a GET on a table that is not loaded loads
// (creates) it, so callers must ask only for tables listed in
// /proc/net/ip_tables_names (ip6_tables_names).
type Socket struct {
	fd     int
	level  int
	Layout Layout
}

// Open opens a raw socket for the IPv4 or the IPv6 legacy tables.
func Open(ipv6 bool) (*Socket, error) {
	family, level, layout := unix.AF_INET, unix.SOL_IP, IPv4
	if ipv6 {
		family, level, layout = unix.AF_INET6, unix.SOL_IPV6, IPv6
	}
	fd, err := unix.Socket(family, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_RAW)
	if err != nil {
		return nil, fmt.Errorf("opening a raw socket to read legacy tables: %w", err)
	}
	return &Socket{fd: fd, level: level, Layout: layout}, nil
}

// Close closes the socket.
func (s *Socket) Close() error { return unix.Close(s.fd) }

// Read reads one table consistently and hands its info and entries blob
// to decode. The blob lives outside the Go heap (an anonymous mapping,
// faulted in at once) and is unmapped when decode returns, so decode must
// copy what it keeps: a large table is tens of megabytes that would
// otherwise start a garbage collection for a buffer read once. The kernel
// hands over a table only whole, so the blob is a reader's peak memory:
// decode calls free(n) once it is done with blob[:n], which gives those
// pages back at once (blob[:n] reads zeros after), so the decoded rules
// grow into the memory the blob leaves.
func (s *Socket) Read(table string, decode func(info Info, blob []byte, free func(n int)) error) error {
	if len(table) >= tableNameLen {
		return fmt.Errorf("legacy table name %q is longer than %d bytes", table, tableNameLen-1)
	}
	// The table may change between the two calls (EAGAIN); a few tries are plenty.
	for range 5 {
		raw := make([]byte, infoLen)
		copy(raw, table)
		if err := getsockopt(s.fd, s.level, soGetInfo, raw); err != nil {
			return fmt.Errorf("reading legacy table %s info: %w", table, err)
		}
		info, err := DecodeInfo(raw)
		if err != nil {
			return err
		}
		buf, err := unix.Mmap(-1, 0, getEntriesHdr+int(info.Size), unix.PROT_READ|unix.PROT_WRITE,
			unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
		if err != nil {
			return fmt.Errorf("reading legacy table %s: %d bytes of memory: %w", table, info.Size, err)
		}
		err = s.readEntries(table, info, buf, decode)
		if uerr := unix.Munmap(buf); err == nil && uerr != nil {
			err = fmt.Errorf("reading legacy table %s: %w", table, uerr)
		}
		if errors.Is(err, unix.EAGAIN) {
			continue
		}
		return err
	}
	return fmt.Errorf("reading legacy table %s: it kept changing while being read", table)
}

func (s *Socket) readEntries(table string, info Info, buf []byte, decode func(Info, []byte, func(int)) error) error {
	copy(buf, table)
	binary.NativeEndian.PutUint32(buf[tableNameLen:], info.Size)
	if err := getsockopt(s.fd, s.level, soGetEntries, buf); err != nil {
		return fmt.Errorf("reading legacy table %s entries: %w", table, err)
	}
	freed := 0 // buf[:freed] is given back; page-aligned, as buf starts a mapping
	free := func(n int) {
		end := (getEntriesHdr + n) &^ (pageSize - 1)
		if end-freed < freeChunk {
			return
		}
		// Best effort: if the kernel refuses, the pages stay until Munmap.
		if unix.Madvise(buf[freed:end], unix.MADV_DONTNEED) == nil {
			freed = end
		}
	}
	return decode(info, buf[getEntriesHdr:], free)
}

// freeChunk is how much decoded blob is given back at once: large enough
// that the madvise calls cost nothing beside the decoding.
const freeChunk = 1 << 20

var pageSize = unix.Getpagesize()

func getsockopt(fd, level, opt int, buf []byte) error {
	n := uint32(len(buf))
	_, _, errno := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n)), 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// Info reads only a table's info (IPT_SO_GET_INFO): its hooks, entry count
// and size, a few dozen bytes however large the table. Asked for a table
// that is not loaded it creates it, as Read does.
func (s *Socket) Info(table string) (Info, error) {
	if len(table) >= tableNameLen {
		return Info{}, fmt.Errorf("legacy table name %q is longer than %d bytes", table, tableNameLen-1)
	}
	raw := make([]byte, infoLen)
	copy(raw, table)
	if err := getsockopt(s.fd, s.level, soGetInfo, raw); err != nil {
		return Info{}, fmt.Errorf("reading legacy table %s info: %w", table, err)
	}
	return DecodeInfo(raw)
}
