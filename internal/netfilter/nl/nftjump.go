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
// in place, so a rule costs no allocation but the name of its target.
func NFTJump(m netlink.Message) (string, error) {
	if len(m.Data) < 4 {
		return "", errors.New("short nftables message")
	}
	var jump []byte
	err := eachAttr(m.Data[4:], func(typ uint16, data []byte) error {
		if typ != unix.NFTA_RULE_EXPRESSIONS {
			return nil
		}
		return eachAttr(data, func(_ uint16, item []byte) error {
			var name, exprData []byte
			_ = eachAttr(item, func(typ uint16, d []byte) error {
				switch typ {
				case unix.NFTA_EXPR_NAME:
					name = cstr(d)
				case unix.NFTA_EXPR_DATA:
					exprData = d
				}
				return nil
			})
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
		return "", fmt.Errorf("rule: %w", err)
	}
	return string(jump), nil
}
