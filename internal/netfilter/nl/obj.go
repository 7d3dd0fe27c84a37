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
	fam, f, err := message(m)
	return Obj{Family: fam, Table: Str(f[unix.NFTA_OBJ_TABLE]), Name: Str(f[unix.NFTA_OBJ_NAME]), Type: BE32(f[unix.NFTA_OBJ_TYPE])}, err
}
