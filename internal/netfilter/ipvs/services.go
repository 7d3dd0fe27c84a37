package ipvs

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sort"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
	"golang.org/x/sys/unix"
)

// uapi numbers (include/uapi/linux/ip_vs.h).
const (
	familyName = "IPVS"
	genlVer    = 1

	cmdNewService = 1
	cmdGetService = 4

	cmdAttrService = 1

	svcAttrAF       = 1
	svcAttrProtocol = 2
	svcAttrAddr     = 3
	svcAttrPort     = 4
	svcAttrFwmark   = 5
	svcAttrSched    = 6

	// MaxServices bounds a dump: kube-proxy makes one per Service IP and
	// port, and the largest clusters reach about a hundred thousand.
	MaxServices = 1 << 20

	// maxFamilies bounds the controller's family dump (a few dozen).
	maxFamilies = 4096
)

// NotInKernel is the fact ReadServices states when the kernel has no
// IPVS: no virtual server can exist.
const NotInKernel = "IPVS not in this kernel (no IPVS genetlink family)"

// Service is one IPVS virtual server.
type Service struct {
	// Addr is the virtual address; invalid for a firewall-mark service.
	Addr     netip.Addr
	Protocol uint16 // IPPROTO_TCP, _UDP, _SCTP
	Port     uint16
	Fwmark   uint32
	Sched    string
}

func (s Service) String() string {
	if s.Fwmark != 0 {
		return fmt.Sprintf("fwmark %d", s.Fwmark)
	}
	proto := map[uint16]string{unix.IPPROTO_TCP: "TCP", unix.IPPROTO_UDP: "UDP", unix.IPPROTO_SCTP: "SCTP"}[s.Protocol]
	if proto == "" {
		proto = fmt.Sprintf("protocol %d", s.Protocol)
	}
	return fmt.Sprintf("%s %s", proto, netip.AddrPortFrom(s.Addr, s.Port))
}

// Services is what ReadServices found: Present false (with Absent saying
// why) when the kernel has no IPVS.
type Services struct {
	Present bool
	Absent  string
	List    []Service
}

// ReadServices dumps every virtual server in the caller's network
// namespace.
func ReadServices() (Services, error) {
	c, err := nlsock.Dial(unix.NETLINK_GENERIC)
	if err != nil {
		return Services{}, err
	}
	defer c.Close()
	id, found, err := familyID(c, familyName)
	if err != nil {
		return Services{}, err
	}
	if !found {
		return Services{Absent: NotInKernel}, nil
	}
	out := Services{Present: true}
	err = c.Request(id, unix.NLM_F_DUMP, []byte{cmdGetService, genlVer, 0, 0}, MaxServices, func(_ uint16, data []byte) error {
		s, err := DecodeService(data)
		if err != nil {
			return err
		}
		out.List = append(out.List, s)
		return nil
	})
	if err != nil {
		return Services{}, fmt.Errorf("dumping IPVS virtual servers: %w", err)
	}
	sort.Slice(out.List, func(i, j int) bool { return out.List[i].String() < out.List[j].String() })
	return out, nil
}

// familyID finds the IPVS family in a dump of generic netlink's families.
// A get by name would do, but on a kernel with modules the controller then
// loads ip_vs for a family it does not know: reading must change nothing.
func familyID(c *nlsock.Conn, want string) (uint16, bool, error) {
	var id uint16
	found := false
	err := c.Request(unix.GENL_ID_CTRL, unix.NLM_F_DUMP, []byte{unix.CTRL_CMD_GETFAMILY, 1, 0, 0}, maxFamilies, func(_ uint16, data []byte) error {
		if len(data) < 4 {
			return errors.New("short generic netlink controller reply")
		}
		attrs, err := nlsock.ParseAttrs(data[4:])
		if err != nil {
			return fmt.Errorf("generic netlink controller reply: %w", err)
		}
		var name string
		var fid uint16
		for _, a := range attrs {
			switch {
			case a.Type == unix.CTRL_ATTR_FAMILY_NAME:
				name = nlsock.CString(a.Value)
			case a.Type == unix.CTRL_ATTR_FAMILY_ID && len(a.Value) == 2:
				fid = binary.NativeEndian.Uint16(a.Value)
			}
		}
		if name == want {
			id, found = fid, true
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("listing generic netlink families: %w", err)
	}
	if found && id == 0 {
		return 0, false, fmt.Errorf("the generic netlink controller named no id for %s", want)
	}
	return id, found, nil
}

// DecodeService reads one IPVS_CMD_NEW_SERVICE message (genlmsghdr and
// attributes). A service without an address family, or with neither an
// address nor a firewall mark, is an error: never a partial one.
func DecodeService(data []byte) (Service, error) {
	if len(data) < 4 {
		return Service{}, fmt.Errorf("IPVS message of %d bytes: shorter than its genlmsghdr", len(data))
	}
	if data[0] != cmdNewService {
		return Service{}, fmt.Errorf("IPVS message command %d, want a service (%d)", data[0], cmdNewService)
	}
	attrs, err := nlsock.ParseAttrs(data[4:])
	if err != nil {
		return Service{}, fmt.Errorf("IPVS message: %w", err)
	}
	var nested []byte
	for _, a := range attrs {
		if a.Type == cmdAttrService {
			nested = a.Value
		}
	}
	if nested == nil {
		return Service{}, errors.New("IPVS message without a service attribute")
	}
	sattrs, err := nlsock.ParseAttrs(nested)
	if err != nil {
		return Service{}, fmt.Errorf("IPVS service: %w", err)
	}
	var s Service
	var af uint16
	var addr []byte
	for _, a := range sattrs {
		switch a.Type {
		case svcAttrAF, svcAttrProtocol, svcAttrPort:
			if len(a.Value) != 2 {
				return Service{}, fmt.Errorf("IPVS service attribute %d of %d bytes, want 2", a.Type, len(a.Value))
			}
			switch a.Type {
			case svcAttrAF:
				af = binary.NativeEndian.Uint16(a.Value)
			case svcAttrProtocol:
				s.Protocol = binary.NativeEndian.Uint16(a.Value)
			case svcAttrPort:
				s.Port = binary.BigEndian.Uint16(a.Value) // __be16
			}
		case svcAttrFwmark:
			if len(a.Value) != 4 {
				return Service{}, fmt.Errorf("IPVS service firewall mark of %d bytes, want 4", len(a.Value))
			}
			s.Fwmark = binary.NativeEndian.Uint32(a.Value)
		case svcAttrAddr:
			addr = a.Value
		case svcAttrSched:
			s.Sched = nlsock.CString(a.Value)
		}
	}
	// The address is a union nf_inet_addr (16 bytes); the family says how
	// much of it is the address.
	switch {
	case af == unix.AF_INET && len(addr) >= 4:
		s.Addr = netip.AddrFrom4([4]byte(addr[:4]))
	case af == unix.AF_INET6 && len(addr) >= 16:
		s.Addr = netip.AddrFrom16([16]byte(addr[:16]))
	case af != unix.AF_INET && af != unix.AF_INET6:
		return Service{}, fmt.Errorf("IPVS service of address family %d, want AF_INET or AF_INET6", af)
	}
	if !s.Addr.IsValid() && s.Fwmark == 0 {
		return Service{}, fmt.Errorf("IPVS service with neither an address (%d bytes for family %d) nor a firewall mark", len(addr), af)
	}
	return s, nil
}

// EncodeService builds the message the kernel sends for s (ip_vs_ctl.c
// ip_vs_genl_fill_service): the inverse of DecodeService, for its tests.
func EncodeService(s Service) []byte {
	af := uint16(unix.AF_INET)
	addr := make([]byte, 16)
	if s.Addr.Is6() && !s.Addr.Is4In6() {
		af = unix.AF_INET6
	}
	if s.Addr.IsValid() {
		b := s.Addr.AsSlice()
		copy(addr, b)
	}
	var n []byte
	n = nlsock.AppendAttr(n, svcAttrAF, binary.NativeEndian.AppendUint16(nil, af))
	if s.Fwmark != 0 {
		n = nlsock.AppendAttr(n, svcAttrFwmark, binary.NativeEndian.AppendUint32(nil, s.Fwmark))
	} else {
		n = nlsock.AppendAttr(n, svcAttrProtocol, binary.NativeEndian.AppendUint16(nil, s.Protocol))
		n = nlsock.AppendAttr(n, svcAttrAddr, addr)
		n = nlsock.AppendAttr(n, svcAttrPort, binary.BigEndian.AppendUint16(nil, s.Port))
	}
	n = nlsock.AppendAttr(n, svcAttrSched, append([]byte(s.Sched), 0))
	return nlsock.AppendAttr([]byte{cmdNewService, genlVer, 0, 0}, cmdAttrService|unix.NLA_F_NESTED, n)
}
