package nl

import (
	"bytes"
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

var hookNames = map[uint32]string{0: "prerouting", 1: "input", 2: "forward", 3: "output", 4: "postrouting", 5: "ingress"}

var policyNames = map[uint32]string{0: "drop", 1: "accept"}

// Generation reads the ruleset's generation id, which every commit bumps:
// equal before and after a dump means the dump is one consistent ruleset.
func (c *Conn) Generation() (uint32, error) {
	var id uint32
	found := false
	err := c.Execute(unix.NFT_MSG_GETGEN, 0, unix.AF_UNSPEC, nil, func(m netlink.Message) error {
		_, f, err := message(m)
		if gen := f[unix.NFTA_GEN_ID]; gen != nil {
			id, found = BE32(gen), true
		}
		return err
	})
	if err == nil && !found {
		err = errors.New("no generation id in the kernel's reply")
	}
	return id, err
}

func DecodeTable(m netlink.Message) (Table, error) {
	fam, f, err := message(m)
	return Table{Family: fam, Name: Str(f[unix.NFTA_TABLE_NAME]), Comment: udata(f[attrTableUserdata], udataComment)}, err
}

func DecodeChain(m netlink.Message) (Chain, error) {
	fam, f, err := message(m)
	c := Chain{Family: fam, Table: Str(f[unix.NFTA_CHAIN_TABLE]), Name: Str(f[unix.NFTA_CHAIN_NAME]), Type: Str(f[unix.NFTA_CHAIN_TYPE]),
		Comment: udata(f[attrChainUserdata], udataComment)}
	if p := f[unix.NFTA_CHAIN_POLICY]; p != nil {
		c.Policy = policyNames[BE32(p)]
	}
	if h := f[unix.NFTA_CHAIN_HOOK]; h != nil {
		var hook fields
		if herr := hook.parse(h); herr != nil {
			return c, fmt.Errorf("chain %s hook: %w", c.Name, herr)
		}
		if num := hook[unix.NFTA_HOOK_HOOKNUM]; num != nil {
			c.HasHook = true
			c.Hook = hookNames[BE32(num)]
			if c.Hook == "" {
				c.Hook = fmt.Sprintf("unknown-hook-%d", BE32(num))
			}
		}
		c.Priority = int32(BE32(hook[unix.NFTA_HOOK_PRIORITY]))
	}
	return c, err
}

func DecodeSet(m netlink.Message) (Set, error) {
	fam, f, err := message(m)
	desc := fieldsOf(f[unix.NFTA_SET_DESC])
	return Set{
		Family:    fam,
		Table:     Str(f[unix.NFTA_SET_TABLE]),
		Name:      Str(f[unix.NFTA_SET_NAME]),
		Flags:     BE32(f[unix.NFTA_SET_FLAGS]),
		KeyType:   BE32(f[unix.NFTA_SET_KEY_TYPE]),
		KeyLen:    BE32(f[unix.NFTA_SET_KEY_LEN]),
		DataType:  BE32(f[unix.NFTA_SET_DATA_TYPE]),
		DataLen:   BE32(f[unix.NFTA_SET_DATA_LEN]),
		TimeoutMS: be64(f[unix.NFTA_SET_TIMEOUT]),
		Size:      BE32(desc[unix.NFTA_SET_DESC_SIZE]),
		Comment:   udata(f[attrSetUserdata], udataSetComment),
	}, err
}

// DecodeElems appends the elements of one NEWSETELEM message to s.
func DecodeElems(m netlink.Message, s *Set) error {
	_, f, err := message(m)
	if err != nil {
		return err
	}
	if list := f[unix.NFTA_SET_ELEM_LIST_ELEMENTS]; list != nil {
		list, err := Attrs(list)
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
	var f fields
	err := f.parse(b)
	e := Elem{
		Key:     bytes.Clone(DataValue(f[unix.NFTA_SET_ELEM_KEY])),
		KeyEnd:  bytes.Clone(DataValue(f[attrElemKeyEnd])),
		Flags:   BE32(f[unix.NFTA_SET_ELEM_FLAGS]),
		Comment: udata(f[unix.NFTA_SET_ELEM_USERDATA], udataComment),
	}
	value, verdict := decodeData(f[unix.NFTA_SET_ELEM_DATA])
	e.Data, e.Verdict = bytes.Clone(value), verdict
	return e, err
}

// decodeData reads an NFTA_DATA nest (an immediate's data, a map
// element's): its value, in place, and its verdict.
func decodeData(b []byte) (value []byte, verdict *Verdict) {
	d := fieldsOf(b)
	if v := d[unix.NFTA_DATA_VERDICT]; v != nil {
		vd := decodeVerdict(v)
		verdict = &vd
	}
	return d[unix.NFTA_DATA_VALUE], verdict
}

func DataValue(b []byte) []byte {
	// eachAttr stopped at the first value, not fieldsOf: fields keeps the
	// last of a type that comes twice, and DataValue has always answered
	// the first.
	var v []byte
	_ = eachAttr(b, func(typ uint16, data []byte) error {
		if typ == unix.NFTA_DATA_VALUE {
			v = data
			return errFound
		}
		return nil
	})
	return v
}

// errFound stops an eachAttr walk that has what it looked for.
var errFound = errors.New("found")

func decodeVerdict(b []byte) Verdict {
	f := fieldsOf(b)
	return Verdict{Code: int32(BE32(f[unix.NFTA_VERDICT_CODE])), Chain: Str(f[unix.NFTA_VERDICT_CHAIN])}
}
