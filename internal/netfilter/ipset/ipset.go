// Package ipset reads the kernel's ipsets over netlink (the netfilter
// subsystem NFNL_SUBSYS_IPSET, include/uapi/linux/netfilter/ipset/ip_set.h):
// each set's name, type, family and counts from one header-only listing,
// the way `ipset list -t` asks, and destroys one set by name for the ipvs
// leftover sweep. kube-proxy's ipvs mode keeps its KUBE-* sets here; a
// move off ipvs can leave them behind (DOMAIN.md 10). Reading has no side
// effects and is bounded (MaxSets, nlsock's read deadline).
package ipset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
	"golang.org/x/sys/unix"
)

// uapi numbers (ip_set.h) golang.org/x/sys/unix does not define.
const (
	subsys = unix.NFNL_SUBSYS_IPSET

	cmdDestroy = 3
	cmdList    = 7

	attrProtocol = 1
	attrSetname  = 2
	attrTypename = 3
	attrRevision = 4
	attrFamily   = 5
	attrFlags    = 6
	attrData     = 7

	// inside attrData
	attrElements   = 24
	attrReferences = 25
	attrMemsize    = 26

	flagListHeader = 1 << 2 // IPSET_FLAG_LIST_HEADER

	// Protocol 6 (IPSET_PROTOCOL_MIN) is what every kernel since 3.x
	// takes; 7 only adds the set's index, which nothing here needs.
	protocol = 6

	errBusy = 4100 // IPSET_ERR_BUSY: a rule still references the set

	// MaxSets bounds a listing: the kernel's default max_sets is 256 and
	// its hard limit 65534; one message per set in a header listing.
	MaxSets = 65536
)

// Set is one ipset as its header describes it.
type Set struct {
	Name     string
	Type     string // hash:ip,port, bitmap:port, list:set, ...
	Revision uint8
	// Family is "inet", "inet6" or "" (types without one: bitmap:port,
	// list:set), as `ipset list` prints it.
	Family string
	// Entries is the number of members (IPSET_ATTR_ELEMENTS).
	Entries uint32
	// References counts the rules (and list:set sets) that use the set:
	// the kernel refuses to destroy one above zero.
	References uint32
	MemSize    uint32
}

// moduleDir exists when ip_set is loaded or built in.
const moduleDir = "/sys/module/ip_set"

// ErrNoIPSet says the kernel has no ipset subsystem: no set can exist.
var ErrNoIPSet = errors.New("ip_set is not in this kernel or not loaded (no ipset can exist)")

// mayAsk says whether asking nfnetlink for ipset's subsystem changes
// nothing: asked for a subsystem it lacks, nfnetlink loads its module.
// ip_set is there when it has its /sys/module directory (built in, it has
// one too: its max_sets parameter). A container may hide /sys/module
// (systemd-nspawn mounts no /sys/module): then a kernel without module
// support (no /proc/modules) can load nothing, and on one with it
// /proc/modules must list ip_set.
func mayAsk() bool {
	if _, err := os.Stat(moduleDir); err == nil {
		return true
	}
	if _, err := os.Stat("/sys/module"); err == nil {
		return false
	}
	data, err := hostfs.New("/").ReadFile(hostfs.ProcModules)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	return bytes.Contains(append([]byte{'\n'}, data...), []byte("\nip_set "))
}

// List reads every set's header in the caller's network namespace, sorted
// by name.
func List() ([]Set, error) {
	if !mayAsk() {
		return nil, ErrNoIPSet
	}
	c, err := nlsock.Dial(unix.NETLINK_NETFILTER)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var out []Set
	err = c.Request(subsys<<8|cmdList, unix.NLM_F_DUMP, listRequest(), MaxSets, func(typ uint16, data []byte) error {
		s, err := Decode(data)
		if err != nil {
			return err
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, kernelError("listing ipsets", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Destroy removes the set name. The kernel refuses while a rule
// references it (an error that says so) and answers ENOENT when it is
// gone, which Destroy reports as an error wrapping unix.ENOENT.
func Destroy(name string) error {
	if name == "" || len(name) > 31 {
		return fmt.Errorf("ipset name %q: want 1 to 31 bytes", name)
	}
	c, err := nlsock.Dial(unix.NETLINK_NETFILTER)
	if err != nil {
		return err
	}
	defer c.Close()
	b := nfgen()
	b = nlsock.AppendAttr(b, attrProtocol, []byte{protocol})
	b = nlsock.AppendAttr(b, attrSetname, append([]byte(name), 0))
	// Without NLM_F_EXCL the kernel answers success for a missing set
	// (flag_exist in ip_set_core.c); the sweep wants to know.
	err = c.Request(subsys<<8|cmdDestroy, unix.NLM_F_ACK|unix.NLM_F_EXCL, b, 1, func(uint16, []byte) error { return nil })
	if err != nil {
		return kernelError(fmt.Sprintf("destroying ipset %s", name), err)
	}
	return nil
}

func nfgen() []byte { return []byte{unix.AF_INET, unix.NFNETLINK_V0, 0, 0} }

func listRequest() []byte {
	b := nfgen()
	b = nlsock.AppendAttr(b, attrProtocol, []byte{protocol})
	return nlsock.AppendAttr(b, attrFlags|unix.NLA_F_NET_BYTEORDER, binary.BigEndian.AppendUint32(nil, flagListHeader))
}

// kernelError names what the kernel's answer means.
func kernelError(what string, err error) error {
	var errno unix.Errno
	if errors.As(err, &errno) {
		switch {
		case errno == errBusy:
			return fmt.Errorf("%s: a rule still references the set (the kernel keeps it): %w", what, err)
		case errno == unix.EINVAL || errno == unix.EOPNOTSUPP || errno == unix.EPROTONOSUPPORT:
			// nfnetlink answers a request to a subsystem it does not
			// have with EINVAL (EOPNOTSUPP on some releases).
			return fmt.Errorf("%s: %w", what, ErrNoIPSet)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}
