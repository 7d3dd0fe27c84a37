package nl

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// XtJumpComment reads, from one iptables-nft rule message of chain chain
// of table table, only what a shallow read (netfilter's ReadOptions.Shallow)
// keeps of it: the Jump and Comment nfttext.IptablesRule gives the rule,
// found without decoding its expressions or rendering its text. The
// comment is that of its first -m comment match (an xt_comment_info, 256
// bytes; the first non-empty one), else that of its userdata when it has
// no comment match at all; the jump is the chain its last verdict or
// xtables target names when isChain accepts it. Rendering the text of the
// thousands of KUBE-SERVICES and KUBE-NODEPORTS rules a large node has was
// a third of verify's time, and verify reads only these two. Attributes
// are walked in place (eachAttr, Attrs without the slice), so a rule costs
// no allocation but its two strings. A rule of another table or chain is
// an error: the dump asked for this one.
func XtJumpComment(m netlink.Message, table, chain string, isChain func(string) bool) (jump, comment string, err error) {
	if len(m.Data) < 4 {
		return "", "", errors.New("short nftables message")
	}
	var userComment []byte
	sawComment := false
	err = eachAttr(m.Data[4:], func(typ uint16, data []byte) error {
		switch typ {
		case unix.NFTA_RULE_TABLE:
			if !bytes.Equal(cstr(data), []byte(table)) {
				return fmt.Errorf("asked the kernel for the rules of table %s, got one of %s", table, Str(data))
			}
		case unix.NFTA_RULE_CHAIN:
			if !bytes.Equal(cstr(data), []byte(chain)) {
				return fmt.Errorf("asked the kernel for the rules of chain %s, got one of %s", chain, Str(data))
			}
		case attrRuleUserdata:
			userComment = udataBytes(data, udataComment)
		case unix.NFTA_RULE_EXPRESSIONS:
			err := eachAttr(data, func(_ uint16, item []byte) error {
				name, exprData := exprNameData(item)
				switch string(name) {
				case "immediate":
					if code, target, ok := immediateVerdict(exprData); ok {
						jump = ""
						if (code == unix.NFT_JUMP || code == unix.NFT_GOTO) && isChain(string(target)) {
							jump = string(target)
						}
					}
				case "target":
					if xname, _, ok := xtNameInfo(exprData); ok {
						jump = ""
						if isChain(string(xname)) {
							jump = string(xname)
						}
					}
				case "match":
					// IptablesRule prints a comment match's text only when
					// its info is the 256-byte xt_comment_info (xtblob);
					// the first non-empty one is the rule's comment, as
					// iptsave.Rule reads it back.
					if xname, info, ok := xtNameInfo(exprData); ok && string(xname) == "comment" {
						sawComment = true
						if len(info) == 256 && comment == "" {
							comment = Str(info)
						}
					}
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("rule in %s/%s: %w", table, chain, err)
			}
		}
		return nil
	})
	if err != nil {
		return jump, comment, err
	}
	if !sawComment && userComment != nil {
		comment = string(userComment)
	}
	return jump, comment, nil
}

// immediateVerdict returns the verdict of an immediate expression's data
// as DecodeExpr and decodeVerdict read it: the last one, and within the
// nested attributes whatever precedes a malformed one.
func immediateVerdict(data []byte) (code int32, chain []byte, ok bool) {
	err := eachAttr(data, func(typ uint16, d []byte) error {
		if typ != unix.NFTA_IMMEDIATE_DATA {
			return nil
		}
		_ = eachAttr(d, func(typ uint16, v []byte) error {
			if typ != unix.NFTA_DATA_VERDICT {
				return nil
			}
			ok, code, chain = true, 0, nil
			_ = eachAttr(v, func(typ uint16, f []byte) error {
				switch typ {
				case unix.NFTA_VERDICT_CODE:
					code = int32(BE32(f))
				case unix.NFTA_VERDICT_CHAIN:
					chain = cstr(f)
				}
				return nil
			})
			return nil
		})
		return nil
	})
	if err != nil {
		return 0, nil, false
	}
	return code, chain, ok
}

// xtNameInfo returns the extension name and info of a match or target
// expression's data as DecodeExpr reads them into an Xt.
func xtNameInfo(data []byte) (name, info []byte, ok bool) {
	err := eachAttr(data, func(typ uint16, d []byte) error {
		switch typ {
		case 1: // NFTA_MATCH_NAME / NFTA_TARGET_NAME
			name = cstr(d)
		case 3: // *_INFO
			info = d
		}
		return nil
	})
	if err != nil {
		return nil, nil, false
	}
	return name, info, true
}

// exprNameData reads one rule expression's name and data attributes.
func exprNameData(item []byte) (name, data []byte) {
	_ = eachAttr(item, func(typ uint16, d []byte) error {
		switch typ {
		case unix.NFTA_EXPR_NAME:
			name = cstr(d)
		case unix.NFTA_EXPR_DATA:
			data = d
		}
		return nil
	})
	return name, data
}
