package netfilter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The nftables netlink dump is decoded here rather than with
// google/nftables' List* helpers: those drop chain and set comments, store
// a verdict map's data type over its key type, silently skip expressions
// they do not know, and can only list rules one chain per request
// (DOMAIN.md 7). google/nftables still decodes each expression
// (expr.Unmarshal, see nlexpr.go).

// Attribute numbers golang.org/x/sys/unix does not define.
const (
	attrTableUserdata = 6
	attrChainUserdata = 0xc
	attrRuleUserdata  = 7
	attrSetUserdata   = 0xd
	attrElemKeyEnd    = 0xa
	udataComment      = 0 // comment TLV type of tables, chains, rules and elements
	udataSetComment   = 7 // NFTNL_UDATA_SET_COMMENT
	verdictDataType   = 0xffffff00
	setConcat         = 0x80   // NFT_SET_CONCAT
	attrTypeMask      = 0x3fff // strips NLA_F_NESTED and NLA_F_NET_BYTEORDER
)

type nlTable struct {
	family  byte
	name    string
	comment string
}

type nlChain struct {
	family          byte
	table, name     string
	hook, typ       string
	hasHook         bool
	priority        int32
	policy, comment string
}

type nlSet struct {
	family            byte
	table, name       string
	flags             uint32
	keyType, keyLen   uint32
	dataType, dataLen uint32
	timeoutMS         uint64
	size              uint32
	comment           string
	elems             []nlElem
	notRead           bool // elements skipped (System.Shallow)
}

type nlElem struct {
	key, keyEnd, data []byte
	verdict           *nlVerdict
	flags             uint32
	comment           string
}

type nlVerdict struct {
	code  int32
	chain string
}

type nlRule struct {
	family       byte
	table, chain string
	exprs        []nlExpr
	comment      string
}

type nlExpr struct {
	name string
	data []byte
}

// attrs decodes one level of netlink attributes without copying: Data
// points into b, so whatever outlives the message is copied by the caller
// (str, bytes.Clone). netlink.UnmarshalAttributes copies every attribute,
// which dominated a large read.
func attrs(b []byte) ([]netlink.Attribute, error) {
	as := make([]netlink.Attribute, 0, 8)
	for len(b) >= 4 {
		n := int(binary.NativeEndian.Uint16(b))
		if n < 4 || n > len(b) {
			return as, fmt.Errorf("netlink attribute of length %d in %d bytes", n, len(b))
		}
		as = append(as, netlink.Attribute{Type: binary.NativeEndian.Uint16(b[2:]) & attrTypeMask, Data: b[4:n:n]})
		b = b[min(len(b), (n+3)&^3):]
	}
	return as, nil
}

func str(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func be32(b []byte) uint32 {
	if len(b) < 4 {
		return 0
	}
	return binary.BigEndian.Uint32(b)
}

func be64(b []byte) uint64 {
	if len(b) < 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// udata returns a TLV value of userdata (libnftnl's format: type, length,
// value), tolerating truncated input.
func udata(b []byte, typ byte) (string, bool) {
	for len(b) >= 2 {
		t, n := b[0], int(b[1])
		if len(b) < 2+n {
			return "", false
		}
		if t == typ {
			return str(b[2 : 2+n]), true
		}
		b = b[2+n:]
	}
	return "", false
}

var hookNames = map[uint32]string{0: "prerouting", 1: "input", 2: "forward", 3: "output", 4: "postrouting", 5: "ingress"}

// payload strips the nfgenmsg header every nftables message starts with.
func payload(m netlink.Message) (family byte, body []byte, err error) {
	if len(m.Data) < 4 {
		return 0, nil, errors.New("short nftables message")
	}
	return m.Data[0], m.Data[4:], nil
}

func decodeTable(m netlink.Message) (nlTable, error) {
	fam, body, err := payload(m)
	if err != nil {
		return nlTable{}, err
	}
	as, err := attrs(body)
	t := nlTable{family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_TABLE_NAME:
			t.name = str(a.Data)
		case attrTableUserdata:
			t.comment, _ = udata(a.Data, udataComment)
		}
	}
	return t, err
}

func decodeChain(m netlink.Message) (nlChain, error) {
	fam, body, err := payload(m)
	if err != nil {
		return nlChain{}, err
	}
	as, err := attrs(body)
	c := nlChain{family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_CHAIN_TABLE:
			c.table = str(a.Data)
		case unix.NFTA_CHAIN_NAME:
			c.name = str(a.Data)
		case unix.NFTA_CHAIN_TYPE:
			c.typ = str(a.Data)
		case unix.NFTA_CHAIN_POLICY:
			c.policy = map[uint32]string{0: "drop", 1: "accept"}[be32(a.Data)]
		case unix.NFTA_CHAIN_HOOK:
			hs, herr := attrs(a.Data)
			if herr != nil {
				return c, fmt.Errorf("chain %s hook: %w", c.name, herr)
			}
			for _, h := range hs {
				switch h.Type {
				case unix.NFTA_HOOK_HOOKNUM:
					c.hasHook = true
					num := be32(h.Data)
					c.hook = hookNames[num]
					if c.hook == "" {
						c.hook = fmt.Sprintf("unknown-hook-%d", num)
					}
				case unix.NFTA_HOOK_PRIORITY:
					c.priority = int32(be32(h.Data))
				}
			}
		case attrChainUserdata:
			c.comment, _ = udata(a.Data, udataComment)
		}
	}
	return c, err
}

func decodeSet(m netlink.Message) (nlSet, error) {
	fam, body, err := payload(m)
	if err != nil {
		return nlSet{}, err
	}
	as, err := attrs(body)
	s := nlSet{family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_SET_TABLE:
			s.table = str(a.Data)
		case unix.NFTA_SET_NAME:
			s.name = str(a.Data)
		case unix.NFTA_SET_FLAGS:
			s.flags = be32(a.Data)
		case unix.NFTA_SET_KEY_TYPE:
			s.keyType = be32(a.Data)
		case unix.NFTA_SET_KEY_LEN:
			s.keyLen = be32(a.Data)
		case unix.NFTA_SET_DATA_TYPE:
			s.dataType = be32(a.Data)
		case unix.NFTA_SET_DATA_LEN:
			s.dataLen = be32(a.Data)
		case unix.NFTA_SET_TIMEOUT:
			s.timeoutMS = be64(a.Data)
		case unix.NFTA_SET_DESC:
			ds, _ := attrs(a.Data)
			for _, d := range ds {
				if d.Type == unix.NFTA_SET_DESC_SIZE {
					s.size = be32(d.Data)
				}
			}
		case attrSetUserdata:
			s.comment, _ = udata(a.Data, udataSetComment)
		}
	}
	return s, err
}

// decodeElems appends the elements of one NEWSETELEM message to s.
func decodeElems(m netlink.Message, s *nlSet) error {
	_, body, err := payload(m)
	if err != nil {
		return err
	}
	as, err := attrs(body)
	if err != nil {
		return err
	}
	for _, a := range as {
		if a.Type != unix.NFTA_SET_ELEM_LIST_ELEMENTS {
			continue
		}
		list, err := attrs(a.Data)
		if err != nil {
			return err
		}
		for _, item := range list {
			e, err := decodeElem(item.Data)
			if err != nil {
				return fmt.Errorf("set %s element: %w", s.name, err)
			}
			s.elems = append(s.elems, e)
		}
	}
	return nil
}

func decodeElem(b []byte) (nlElem, error) {
	var e nlElem
	as, err := attrs(b)
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_SET_ELEM_KEY:
			e.key = bytes.Clone(dataValue(a.Data))
		case attrElemKeyEnd:
			e.keyEnd = bytes.Clone(dataValue(a.Data))
		case unix.NFTA_SET_ELEM_FLAGS:
			e.flags = be32(a.Data)
		case unix.NFTA_SET_ELEM_USERDATA:
			e.comment, _ = udata(a.Data, udataComment)
		case unix.NFTA_SET_ELEM_DATA:
			ds, _ := attrs(a.Data)
			for _, d := range ds {
				switch d.Type {
				case unix.NFTA_DATA_VALUE:
					e.data = bytes.Clone(d.Data)
				case unix.NFTA_DATA_VERDICT:
					v := decodeVerdict(d.Data)
					e.verdict = &v
				}
			}
		}
	}
	return e, err
}

func dataValue(b []byte) []byte {
	as, _ := attrs(b)
	for _, a := range as {
		if a.Type == unix.NFTA_DATA_VALUE {
			return a.Data
		}
	}
	return nil
}

func decodeVerdict(b []byte) nlVerdict {
	var v nlVerdict
	as, _ := attrs(b)
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_VERDICT_CODE:
			v.code = int32(be32(a.Data))
		case unix.NFTA_VERDICT_CHAIN:
			v.chain = str(a.Data)
		}
	}
	return v
}
