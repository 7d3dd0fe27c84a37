package netfilter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
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
// asked, so nothing is loaded.
func LegacyHere() ([]rules.Table, error) {
	var out []rules.Table
	for _, f := range []struct {
		fam  rules.Family
		list string
	}{{rules.IPv4, hostfs.IPTablesNames}, {rules.IPv6, hostfs.IP6TablesNames}} {
		names, err := tablesHere(f.list)
		if err != nil {
			return nil, err
		}
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

// tablesHere lists the legacy tables of the calling thread's network
// namespace, from its own copy of table list namesPath
// (hostfs.IPTablesNames or IP6TablesNames): /proc/thread-self/net, not
// /proc/self/net, which is the main thread's namespace and another one
// on a thread that entered a namespace. An absent list means the module
// is not loaded there: no table.
func tablesHere(namesPath string) ([]string, error) {
	path := strings.Replace(namesPath, "/proc/net/", "/proc/thread-self/net/", 1)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading this network namespace's legacy table list %s: %w", path, err)
	}
	return strings.Fields(string(data)), nil
}
