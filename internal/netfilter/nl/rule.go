package nl

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func DecodeRule(m netlink.Message) (Rule, error) {
	fam, as, err := Message(m)
	r := Rule{Family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_RULE_TABLE:
			r.Table = Str(a.Data)
		case unix.NFTA_RULE_CHAIN:
			r.Chain = Str(a.Data)
		case attrRuleUserdata:
			r.Comment = udata(a.Data, udataComment)
		case unix.NFTA_RULE_EXPRESSIONS:
			list, lerr := Attrs(a.Data)
			if lerr != nil {
				return r, fmt.Errorf("rule in %s/%s: %w", r.Table, r.Chain, lerr)
			}
			for _, item := range list {
				es, _ := Attrs(item.Data)
				var e Expr
				for _, ea := range es {
					switch ea.Type {
					case unix.NFTA_EXPR_NAME:
						e.Name = Str(ea.Data)
					case unix.NFTA_EXPR_DATA:
						e.Data = ea.Data
					}
				}
				r.Exprs = append(r.Exprs, e)
			}
		}
	}
	return r, err
}
