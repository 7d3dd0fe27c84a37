//go:build linux

package legacy

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// ReadTables reads the named legacy tables of one family in-process, with
// the GET calls iptables-legacy-save makes, as Table decodes them (jumps
// and comments only; rules of chains skip names are only counted).
// names must be tables the kernel lists already: a GET on any other
// table creates it. Errors wrap the socket's errno, so callers can tell a
// refused read (EPERM, EACCES) from the rest.
func ReadTables(fam rules.Family, names []string, skip func(chain string) bool) ([]rules.Table, error) {
	tables := make([]rules.Table, 0, len(names))
	err := read(fam, names, func(name string, sock *Socket, info Info, blob []byte, free func(int)) error {
		t, err := table(name, fam, info, blob, sock.Layout, skip, free)
		if err != nil {
			return fmt.Errorf("decoding %s legacy table %s: %w", fam, name, err)
		}
		tables = append(tables, t)
		return nil
	})
	return tables, err
}

// ChainNames returns the user-defined chain names of each named table of
// one family, keyed by table (the cheap read facts needs: no rule is
// decoded). The same caution as ReadTables applies to names.
func ChainNames(fam rules.Family, names []string) (map[string][]string, error) {
	out := map[string][]string{}
	err := read(fam, names, func(name string, sock *Socket, _ Info, blob []byte, _ func(int)) error {
		chains, err := UserChains(blob, sock.Layout)
		out[name] = chains
		return err
	})
	return out, err
}

// read opens one socket for fam and passes each named table's blob to each.
func read(fam rules.Family, names []string, each func(name string, sock *Socket, info Info, blob []byte, free func(int)) error) error {
	if len(names) == 0 {
		return nil
	}
	sock, err := Open(fam == rules.IPv6)
	if err != nil {
		return err
	}
	defer sock.Close()
	for _, name := range names {
		if err := sock.Read(name, func(info Info, blob []byte, free func(int)) error { return each(name, sock, info, blob, free) }); err != nil {
			return err
		}
	}
	return nil
}
