package rules

import "strings"

// ElementJump is the chain a verdict map's element text ("KEY [comment
// "..."] : goto CHAIN", as Set.Elements holds it) jumps or goes to, or ""
// when its data is no jump or goto (drop, accept, a plain map's value).
// The data starts after the first " : " outside the quoted comment: keys
// (addresses, protocols, ports joined by " . ") never hold one, while the
// chain name after the verdict may hold anything.
func ElementJump(element string) string {
	quoted := false
	for i := 0; i < len(element); i++ {
		switch {
		case element[i] == '"':
			quoted = !quoted
		case !quoted && strings.HasPrefix(element[i:], " : "):
			data := element[i+len(" : "):]
			for _, verb := range []string{"goto ", "jump "} {
				if chain, ok := strings.CutPrefix(data, verb); ok {
					return chain
				}
			}
			return ""
		}
	}
	return ""
}
