package netfilter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/xtlegacy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// readSockopt reads one family's legacy tables in-process, with the GET
// calls iptables-legacy-save makes, for shallow reads: verify needs only
// chains, policies, rule counts, jumps and comments, and exec'ing the save
// tools and parsing their text cost more than the check itself.
//
// A GET on a table that is not loaded creates it, so only tables listed in
// the table list under the root are read, and only if the kernel this
// process talks to lists them too (the root may be another host's copy).
func (s *System) readSockopt(lf legacyFamily, listed []byte) ([]rules.Table, error) {
	live, err := os.ReadFile(liveNames(lf.names))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // the module is not loaded: no table exists here
	}
	if err != nil {
		return nil, fmt.Errorf("reading this network namespace's legacy table list: %w", err)
	}
	liveSet := strings.Fields(string(live))
	var names []string
	for _, n := range strings.Fields(string(bytes.TrimSpace(listed))) {
		if slices.Contains(liveSet, n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	sock, err := xtlegacy.Open(lf.family == rules.IPv6)
	if err != nil {
		return nil, s.sockoptError(lf, err)
	}
	defer sock.Close()
	tables := make([]rules.Table, 0, len(names))
	for _, name := range names {
		var decodeErr error
		err := sock.Read(name, func(info xtlegacy.Info, blob []byte) error {
			t, err := xtlegacy.Table(name, lf.family, info, blob, sock.Layout, s.SkipChain)
			tables, decodeErr = append(tables, t), err
			return err
		})
		if decodeErr != nil {
			return nil, fmt.Errorf("decoding %s legacy rules: %w", lf.family, decodeErr)
		}
		if err != nil {
			return nil, s.sockoptError(lf, err)
		}
	}
	return tables, nil
}

func (s *System) sockoptError(lf legacyFamily, err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return &PermissionError{Backend: backend.IptablesLegacy, Err: err}
	}
	return fmt.Errorf("reading %s legacy rules: %w", lf.family, err)
}

// liveNames is the table list of this process's own network namespace:
// the kernel the socket reads, whatever the root.
func liveNames(names string) string {
	return strings.Replace(names, "/proc/net/", "/proc/self/net/", 1)
}
