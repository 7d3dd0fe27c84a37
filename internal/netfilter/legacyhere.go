package netfilter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/legacy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// LegacyHere reads the legacy xtables tables (both families) of the
// calling thread's network namespace in-process, as a shallow read does
// (rules counted with their jump and comment): the census enters each
// pod's namespace on a locked thread and reads it there. Only tables the
// namespace lists in /proc/thread-self/net/ip*_tables_names are asked
// about (a GET on any other creates it), and a list that is absent means
// the module is not loaded: no legacy table can exist and nothing is
// asked, so nothing is loaded. /proc/self/net would be the main thread's
// namespace, not this thread's.
func LegacyHere() ([]rules.Table, error) {
	var out []rules.Table
	for _, f := range []struct {
		fam  rules.Family
		list string
	}{{rules.IPv4, "/proc/thread-self/net/ip_tables_names"}, {rules.IPv6, "/proc/thread-self/net/ip6_tables_names"}} {
		data, err := os.ReadFile(f.list)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading this network namespace's legacy table list %s: %w", f.list, err)
		}
		names := strings.Fields(string(data))
		if len(names) == 0 {
			continue
		}
		tables, err := legacy.ReadTables(f.fam, names, nil)
		if err != nil {
			return nil, fmt.Errorf("reading %s legacy tables %s: %w", f.fam, strings.Join(names, ", "), err)
		}
		out = append(out, tables...)
	}
	return out, nil
}
