package ipvs

import (
	"encoding/binary"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
	"golang.org/x/sys/unix"
)

// The sweep's writes, one netlink request each with the kernel's ack
// awaited (nlsock's read deadline bounds the wait).

const cmdDelService = 3

// DeleteLink deletes the link by the index read with its kind (the kernel
// goes by the index when one is given): a link made since under the same
// name has another index and is never touched.
func DeleteLink(l Link) error {
	c, err := nlsock.Dial(unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer c.Close()
	req := make([]byte, unix.SizeofIfInfomsg)
	binary.NativeEndian.PutUint32(req[4:], uint32(l.Index))
	req = nlsock.AppendAttr(req, unix.IFLA_IFNAME, append([]byte(l.Name), 0))
	if err := c.Request(unix.RTM_DELLINK, unix.NLM_F_ACK, req, 1, func(uint16, []byte) error { return nil }); err != nil {
		return fmt.Errorf("deleting link %s (index %d): %w", l.Name, l.Index, err)
	}
	return nil
}

// DeleteService deletes one virtual server (IPVS_CMD_DEL_SERVICE). Not
// exercised on a live kernel here: the test kernel has no IPVS.
func DeleteService(s Service) error {
	c, err := nlsock.Dial(unix.NETLINK_GENERIC)
	if err != nil {
		return err
	}
	defer c.Close()
	id, found, err := familyID(c, familyName)
	if err != nil {
		return err
	}
	if !found {
		return fmt.Errorf("deleting IPVS virtual server %s: %s", s, NotInKernel)
	}
	msg := EncodeService(s)
	msg[0] = cmdDelService
	if err := c.Request(id, unix.NLM_F_ACK, msg, 1, func(uint16, []byte) error { return nil }); err != nil {
		return fmt.Errorf("deleting IPVS virtual server %s: %w", s, err)
	}
	return nil
}
