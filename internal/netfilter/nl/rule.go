package nl

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

func DecodeRule(m netlink.Message) (Rule, error) {
	fam, f, err := message(m)
	r := Rule{Family: fam, Table: Str(f[unix.NFTA_RULE_TABLE]), Chain: Str(f[unix.NFTA_RULE_CHAIN]), Comment: udata(f[attrRuleUserdata], udataComment)}
	lerr := eachAttr(f[unix.NFTA_RULE_EXPRESSIONS], func(_ uint16, item []byte) error {
		e := fieldsOf(item)
		r.Exprs = append(r.Exprs, Expr{Name: Str(e[unix.NFTA_EXPR_NAME]), Data: e[unix.NFTA_EXPR_DATA]})
		return nil
	})
	if lerr != nil {
		// A rule whose list does not decode keeps no expression: half a
		// rule would render as a different one.
		r.Exprs = nil
		return r, fmt.Errorf("rule in %s/%s: %w", r.Table, r.Chain, lerr)
	}
	return r, err
}
