package rules

import (
	"strings"
	"testing"
)

func TestElementJump(t *testing.T) {
	for element, want := range map[string]string{
		"172.30.0.41 . tcp . 80 : goto service-ULMVA6XW-ns1/svc1/tcp/p80":            "service-ULMVA6XW-ns1/svc1/tcp/p80",
		"tcp . 3001 : goto external-42NWR2OI-ns2/svc2/tcp/p80":                       "external-42NWR2OI-ns2/svc2/tcp/p80",
		"fd00:10:96::1 . udp . 53 : jump service-X-ns/dns/udp/dns":                   "service-X-ns/dns/udp/dns",
		`172.30.0.42 . tcp . 80 comment "ns3/svc3:p80 : goto x" : goto reject-chain`: "reject-chain",
		`tcp . 3001 comment "ns2/svc2:p80" : drop`:                                   "",
		"10.0.0.1 : 10.0.0.2 . 80":                                                   "",
		"10.0.0.1":                                                                   "",
		"10.0.0.1 . tcp . 80 : goto odd : goto name":                                 "odd : goto name",
	} {
		if got := ElementJump(element); got != want {
			t.Errorf("ElementJump(%q) = %q, want %q", element, got, want)
		}
	}
}

// FuzzElementJump: an element as the readers render it (a key without
// " : " or quotes, an optional comment quoted by QuoteNFT, a jump or goto
// to any chain name) gives back that chain name.
func FuzzElementJump(f *testing.F) {
	f.Add("172.30.0.41 . tcp . 80", "", "service-ULMVA6XW-ns1/svc1/tcp/p80", true)
	f.Add("tcp . 3001", "ns2/svc2:p80", "external-X", false)
	f.Add("fd00::1 . tcp . 80", `a " : goto b`, "c : goto d", true)
	f.Fuzz(func(t *testing.T, key, comment, chain string, jump bool) {
		if strings.Contains(key, " : ") || strings.Contains(key, `"`) || strings.HasSuffix(key, " :") ||
			strings.HasSuffix(key, " ") || strings.HasPrefix(key, ": ") || key == ":" {
			return // not a key the readers render
		}
		element := key
		if comment != "" {
			element += " comment " + QuoteNFT(comment)
		}
		verb := "goto "
		if jump {
			verb = "jump "
		}
		element += " : " + verb + chain
		if got := ElementJump(element); got != chain {
			t.Errorf("ElementJump(%q) = %q, want %q", element, got, chain)
		}
	})
}
