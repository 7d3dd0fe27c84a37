//go:build !linux

package facts

import "errors"

// legacyChains needs Linux's xtables socket API.
func legacyChains(table string, ipv6 bool) ([]string, error) {
	return nil, errors.New("legacy iptables can only be read on Linux")
}
