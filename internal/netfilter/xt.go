package netfilter

import "github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"

func xtRule(r nlRule, isChain func(string) bool) rules.Rule {
	return rules.Rule{Text: unsupported("xt")}
}
