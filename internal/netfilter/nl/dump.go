package nl

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
// they do not know (DOMAIN.md 7). Like them, and like iptables-nft-save,
// rules are dumped one chain per request (DumpChainRules says why).
// google/nftables still decodes some expressions (expr.Unmarshal, see
// expr.go).

// Attribute numbers golang.org/x/sys/unix does not define.
const (
	attrTableUserdata = 6
	attrChainUserdata = 0xc
	attrRuleUserdata  = 7
	attrSetUserdata   = 0xd
	attrElemKeyEnd    = 0xa
	udataComment      = 0 // comment TLV type of tables, chains, rules and elements
	udataSetComment   = 7 // NFTNL_UDATA_SET_COMMENT
	VerdictDataType   = 0xffffff00
	SetConcat         = 0x80   // NFT_SET_CONCAT
	attrTypeMask      = 0x3fff // strips NLA_F_NESTED and NLA_F_NET_BYTEORDER
)

type Table struct {
	Family  byte
	Name    string
	Comment string
}

type Chain struct {
	Family          byte
	Table, Name     string
	Hook, Type      string
	HasHook         bool
	Priority        int32
	Policy, Comment string
}

type Set struct {
	Family            byte
	Table, Name       string
	Flags             uint32
	KeyType, KeyLen   uint32
	DataType, DataLen uint32
	TimeoutMS         uint64
	Size              uint32
	Comment           string
	Elems             []Elem
	NotRead           bool // elements skipped (System.Shallow)
}

type Elem struct {
	Key, KeyEnd, Data []byte
	Verdict           *Verdict
	Flags             uint32
	Comment           string
}

type Verdict struct {
	Code  int32
	Chain string
}

type Rule struct {
	Family       byte
	Table, Chain string
	Exprs        []Expr
	Comment      string
}

type Expr struct {
	Name string
	Data []byte
}

// Attrs decodes one level of netlink attributes without copying: Data
// points into b, so whatever outlives the message is copied by the caller
// (Str, bytes.Clone). netlink.UnmarshalAttributes copies every attribute,
// which dominated a large read.
func Attrs(b []byte) ([]netlink.Attribute, error) {
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

// Str is a NUL-terminated (or unterminated) netlink string, copied.
func Str(b []byte) string {
	return string(cstr(b))
}

func BE32(b []byte) uint32 {
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

// cstr is Str without the copy.
func cstr(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// udataBytes returns a TLV value of userdata (libnftnl's format: type,
// length, value) up to its NUL, in place; nil when typ is absent or the
// input is truncated before it.
func udataBytes(b []byte, typ byte) []byte {
	for len(b) >= 2 {
		t, n := b[0], int(b[1])
		if len(b) < 2+n {
			return nil
		}
		if t == typ {
			return cstr(b[2 : 2+n])
		}
		b = b[2+n:]
	}
	return nil
}

// udata is udataBytes copied into a string ("" when typ is absent).
func udata(b []byte, typ byte) string {
	return string(udataBytes(b, typ))
}

var hookNames = map[uint32]string{0: "prerouting", 1: "input", 2: "forward", 3: "output", 4: "postrouting", 5: "ingress"}

// Message strips the nfgenmsg header every nftables message starts with
// and decodes the attributes after it. On an error the attributes read
// before it are still returned: decoders keep what they could read.
func Message(m netlink.Message) (family byte, as []netlink.Attribute, err error) {
	if len(m.Data) < 4 {
		return 0, nil, errors.New("short nftables message")
	}
	as, err = Attrs(m.Data[4:])
	return m.Data[0], as, err
}

// Generation reads the ruleset's generation id, which every commit bumps:
// equal before and after a dump means the dump is one consistent ruleset.
func (c *Conn) Generation() (uint32, error) {
	var id uint32
	found := false
	err := c.Execute(unix.NFT_MSG_GETGEN, 0, unix.AF_UNSPEC, nil, func(m netlink.Message) error {
		_, as, err := Message(m)
		for _, a := range as {
			if a.Type == unix.NFTA_GEN_ID {
				id, found = BE32(a.Data), true
			}
		}
		return err
	})
	if err == nil && !found {
		err = errors.New("no generation id in the kernel's reply")
	}
	return id, err
}

func DecodeTable(m netlink.Message) (Table, error) {
	fam, as, err := Message(m)
	t := Table{Family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_TABLE_NAME:
			t.Name = Str(a.Data)
		case attrTableUserdata:
			t.Comment = udata(a.Data, udataComment)
		}
	}
	return t, err
}

func DecodeChain(m netlink.Message) (Chain, error) {
	fam, as, err := Message(m)
	c := Chain{Family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_CHAIN_TABLE:
			c.Table = Str(a.Data)
		case unix.NFTA_CHAIN_NAME:
			c.Name = Str(a.Data)
		case unix.NFTA_CHAIN_TYPE:
			c.Type = Str(a.Data)
		case unix.NFTA_CHAIN_POLICY:
			c.Policy = map[uint32]string{0: "drop", 1: "accept"}[BE32(a.Data)]
		case unix.NFTA_CHAIN_HOOK:
			hs, herr := Attrs(a.Data)
			if herr != nil {
				return c, fmt.Errorf("chain %s hook: %w", c.Name, herr)
			}
			for _, h := range hs {
				switch h.Type {
				case unix.NFTA_HOOK_HOOKNUM:
					c.HasHook = true
					num := BE32(h.Data)
					c.Hook = hookNames[num]
					if c.Hook == "" {
						c.Hook = fmt.Sprintf("unknown-hook-%d", num)
					}
				case unix.NFTA_HOOK_PRIORITY:
					c.Priority = int32(BE32(h.Data))
				}
			}
		case attrChainUserdata:
			c.Comment = udata(a.Data, udataComment)
		}
	}
	return c, err
}

func DecodeSet(m netlink.Message) (Set, error) {
	fam, as, err := Message(m)
	s := Set{Family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_SET_TABLE:
			s.Table = Str(a.Data)
		case unix.NFTA_SET_NAME:
			s.Name = Str(a.Data)
		case unix.NFTA_SET_FLAGS:
			s.Flags = BE32(a.Data)
		case unix.NFTA_SET_KEY_TYPE:
			s.KeyType = BE32(a.Data)
		case unix.NFTA_SET_KEY_LEN:
			s.KeyLen = BE32(a.Data)
		case unix.NFTA_SET_DATA_TYPE:
			s.DataType = BE32(a.Data)
		case unix.NFTA_SET_DATA_LEN:
			s.DataLen = BE32(a.Data)
		case unix.NFTA_SET_TIMEOUT:
			s.TimeoutMS = be64(a.Data)
		case unix.NFTA_SET_DESC:
			ds, _ := Attrs(a.Data)
			for _, d := range ds {
				if d.Type == unix.NFTA_SET_DESC_SIZE {
					s.Size = BE32(d.Data)
				}
			}
		case attrSetUserdata:
			s.Comment = udata(a.Data, udataSetComment)
		}
	}
	return s, err
}

// DecodeElems appends the elements of one NEWSETELEM message to s.
func DecodeElems(m netlink.Message, s *Set) error {
	_, as, err := Message(m)
	if err != nil {
		return err
	}
	for _, a := range as {
		if a.Type != unix.NFTA_SET_ELEM_LIST_ELEMENTS {
			continue
		}
		list, err := Attrs(a.Data)
		if err != nil {
			return err
		}
		for _, item := range list {
			e, err := decodeElem(item.Data)
			if err != nil {
				return fmt.Errorf("set %s element: %w", s.Name, err)
			}
			s.Elems = append(s.Elems, e)
		}
	}
	return nil
}

func decodeElem(b []byte) (Elem, error) {
	var e Elem
	as, err := Attrs(b)
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_SET_ELEM_KEY:
			e.Key = bytes.Clone(DataValue(a.Data))
		case attrElemKeyEnd:
			e.KeyEnd = bytes.Clone(DataValue(a.Data))
		case unix.NFTA_SET_ELEM_FLAGS:
			e.Flags = BE32(a.Data)
		case unix.NFTA_SET_ELEM_USERDATA:
			e.Comment = udata(a.Data, udataComment)
		case unix.NFTA_SET_ELEM_DATA:
			ds, _ := Attrs(a.Data)
			for _, d := range ds {
				switch d.Type {
				case unix.NFTA_DATA_VALUE:
					e.Data = bytes.Clone(d.Data)
				case unix.NFTA_DATA_VERDICT:
					v := decodeVerdict(d.Data)
					e.Verdict = &v
				}
			}
		}
	}
	return e, err
}

func DataValue(b []byte) []byte {
	as, _ := Attrs(b)
	for _, a := range as {
		if a.Type == unix.NFTA_DATA_VALUE {
			return a.Data
		}
	}
	return nil
}

func decodeVerdict(b []byte) Verdict {
	var v Verdict
	as, _ := Attrs(b)
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_VERDICT_CODE:
			v.Code = int32(BE32(a.Data))
		case unix.NFTA_VERDICT_CHAIN:
			v.Chain = Str(a.Data)
		}
	}
	return v
}
