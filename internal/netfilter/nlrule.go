package netfilter

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func decodeRule(m netlink.Message) (nlRule, error) {
	fam, body, err := payload(m)
	if err != nil {
		return nlRule{}, err
	}
	as, err := attrs(body)
	r := nlRule{family: fam}
	for _, a := range as {
		switch a.Type {
		case unix.NFTA_RULE_TABLE:
			r.table = str(a.Data)
		case unix.NFTA_RULE_CHAIN:
			r.chain = str(a.Data)
		case attrRuleUserdata:
			r.comment, _ = udata(a.Data, udataComment)
		case unix.NFTA_RULE_EXPRESSIONS:
			list, lerr := attrs(a.Data)
			if lerr != nil {
				return r, fmt.Errorf("rule in %s/%s: %w", r.table, r.chain, lerr)
			}
			for _, item := range list {
				es, _ := attrs(item.Data)
				var e nlExpr
				for _, ea := range es {
					switch ea.Type {
					case unix.NFTA_EXPR_NAME:
						e.name = str(ea.Data)
					case unix.NFTA_EXPR_DATA:
						e.data = ea.Data
					}
				}
				r.exprs = append(r.exprs, e)
			}
		}
	}
	return r, err
}
