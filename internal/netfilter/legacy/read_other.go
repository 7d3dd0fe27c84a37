//go:build !linux

package legacy

import (
	"errors"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

var errNotLinux = errors.New("legacy iptables can only be read on Linux (xtables socket API)")

// ReadTables needs Linux's xtables socket API.
func ReadTables(rules.Family, []string, func(string) bool) ([]rules.Table, error) {
	return nil, errNotLinux
}

// ChainNames needs Linux's xtables socket API.
func ChainNames(rules.Family, []string) (map[string][]string, error) {
	return nil, errNotLinux
}
