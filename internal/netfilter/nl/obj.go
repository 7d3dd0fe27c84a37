package nl

import (
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Obj is a stateful nftables object (NFT_MSG_GETOBJ): a named counter,
// quota, limit... Only what names it is decoded; its state (a counter's
// packets and bytes) changes with traffic and is left out.
type Obj struct {
	Family      byte
	Table, Name string
	Type        uint32 // unix.NFT_OBJECT_COUNTER, ...
}

// DecodeObj decodes one message of an object dump.
func DecodeObj(m netlink.Message) (Obj, error) {
	fam, as, err := Message(m)
	o := Obj{Family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_OBJ_TABLE:
			o.Table = Str(a.Data)
		case unix.NFTA_OBJ_NAME:
			o.Name = Str(a.Data)
		case unix.NFTA_OBJ_TYPE:
			o.Type = BE32(a.Data)
		}
	}
	return o, err
}
