package nl

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// NFTJump reads, from one native nftables rule message, only the chain
// its last jump or goto verdict names ("" for none), as nfttext.NFTRule
// gives it in Rule.Jump, without decoding its other expressions or
// rendering its text. verify reads kube-proxy's per-service chains this
// way (netfilter's ReadOptions.SkipNFTablesChain): it follows their jumps
// to find the chains no Service dispatch reaches, and rendering the rules
// of most of a large table cost a third of its read. Attributes are walked
// in place and the name is returned in place too: a rule costs no
// allocation, and the caller copies the name it keeps (or finds it among
// the table's chain names).
func NFTJump(m netlink.Message) ([]byte, error) {
	if len(m.Data) < 4 {
		return nil, errors.New("short nftables message")
	}
	var jump []byte
	err := eachAttr(m.Data[4:], func(typ uint16, data []byte) error {
		if typ != unix.NFTA_RULE_EXPRESSIONS {
			return nil
		}
		return eachAttr(data, func(_ uint16, item []byte) error {
			name, exprData := exprNameData(item)
			if string(name) != "immediate" {
				return nil
			}
			if code, target, ok := immediateVerdict(exprData); ok && (code == unix.NFT_JUMP || code == unix.NFT_GOTO) {
				jump = target
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("rule: %w", err)
	}
	return jump, nil
}

// ElemJumps calls each with the chain every element of one NEWSETELEM
// message of a verdict map jumps or goes to (elements with another verdict
// are passed over), in place: the caller copies what it keeps. A shallow
// read learns where kube-proxy's dispatch maps lead this way, without
// holding or rendering their thousands of elements.
func ElemJumps(m netlink.Message, each func(chain []byte)) error {
	_, f, err := message(m)
	if err != nil {
		return err
	}
	return eachAttr(f[unix.NFTA_SET_ELEM_LIST_ELEMENTS], func(_ uint16, elem []byte) error {
		var e fields
		if err := e.parse(elem); err != nil {
			return fmt.Errorf("set element: %w", err)
		}
		d := fieldsOf(e[unix.NFTA_SET_ELEM_DATA])
		if d[unix.NFTA_DATA_VERDICT] == nil {
			return nil
		}
		v := fieldsOf(d[unix.NFTA_DATA_VERDICT])
		if code := int32(BE32(v[unix.NFTA_VERDICT_CODE])); code == unix.NFT_JUMP || code == unix.NFT_GOTO {
			each(cstr(v[unix.NFTA_VERDICT_CHAIN]))
		}
		return nil
	})
}
