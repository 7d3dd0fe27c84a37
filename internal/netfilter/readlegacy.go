package netfilter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/iptsave"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/legacy"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// legacyFamily says where one family's legacy tables are listed and which
// tool dumps them.
type legacyFamily struct {
	family rules.Family
	names  string // host path listing the legacy tables in use
	binary string
}

func (s *System) legacyFamilies() []legacyFamily {
	return []legacyFamily{
		{rules.IPv4, hostfs.IPTablesNames, s.IptablesLegacySave},
		{rules.IPv6, hostfs.IP6TablesNames, s.Ip6tablesLegacySave},
	}
}

// readLegacy runs exactly one *-legacy-save per family, without -t: -t, -L
// and -S create the tables they name, and a reader must not write. A
// shallow read (verify) asks the kernel directly instead (readSockopt). A
// family whose table list is empty or absent has nothing to read, so
// nothing runs.
// The save tools of the two families run at the same time, each parsed as
// it streams.
func (s *System) readLegacy(ctx context.Context) (*rules.Ruleset, error) {
	fams := s.legacyFamilies()
	results := make([][]rules.Table, len(fams))
	errs := make([]error, len(fams))
	var wg sync.WaitGroup
	for i, lf := range fams {
		names, err := s.Root.ReadFile(lf.names)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs[i] = fmt.Errorf("reading legacy table list %s: %w", s.Root.Path(lf.names), err)
			continue
		}
		if len(bytes.TrimSpace(names)) == 0 {
			continue
		}
		if s.Shallow {
			// One family after the other: each table's blob is the
			// read's peak memory, and two at once add up.
			results[i], errs[i] = s.readSockopt(lf, names)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.runSave(ctx, lf)
		}()
	}
	wg.Wait()
	rs := &rules.Ruleset{Backend: backend.IptablesLegacy}
	for i := range fams {
		if errs[i] != nil {
			return nil, errs[i]
		}
		rs.Tables = append(rs.Tables, results[i]...)
	}
	return rs, nil
}

func (s *System) runSave(ctx context.Context, lf legacyFamily) ([]rules.Table, error) {
	path, err := s.lookPath(lf.binary)
	if err != nil {
		return nil, &NotInstalledError{Backend: backend.IptablesLegacy, Binary: lf.binary, Err: err}
	}
	var tables []rules.Table
	var parseErr error
	stderr, err := s.run(ctx, path, func(out io.Reader) {
		var skip func(string) bool
		if s.Shallow {
			skip = s.SkipChain
		}
		tables, parseErr = iptsave.ParseShallow(out, lf.family, skip)
		_, _ = io.Copy(io.Discard, out) // let the tool finish after a parse error
	})
	if err != nil {
		if strings.Contains(stderr, "Permission denied") || strings.Contains(stderr, "must be root") {
			return nil, &PermissionError{Backend: backend.IptablesLegacy, Err: fmt.Errorf("%s: %w: %s", path, err, strings.TrimSpace(stderr))}
		}
		return nil, fmt.Errorf("reading %s rules: %s: %w: %s", lf.family, path, err, strings.TrimSpace(stderr))
	}
	if parseErr != nil {
		return nil, fmt.Errorf("parsing the output of %s: %w", path, parseErr)
	}
	return tables, nil
}

// execRun starts path with no arguments and streams its stdout into parse,
// so large rulesets are parsed while the tool still writes.
func execRun(ctx context.Context, path string, parse func(io.Reader)) (string, error) {
	cmd := exec.CommandContext(ctx, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", err
	}
	growPipe(out)
	if err := cmd.Start(); err != nil {
		return "", err
	}
	parse(out)
	err = cmd.Wait()
	return stderr.String(), err
}

// growPipe raises the pipe's capacity (64 KiB by default) so the save tool,
// writing megabytes for a large ruleset, is not stopped every few pages to
// wait for the parser. Best effort: the default size works, just slower.
func growPipe(r io.Reader) {
	if f, ok := r.(interface{ Fd() uintptr }); ok {
		_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
	}
}

// readSockopt reads one family's legacy tables in-process (legacy.ReadTables)
// for shallow reads: verify needs only chains, policies, rule counts, jumps
// and comments, and exec'ing the save tools and parsing their text cost
// more than the check itself.
//
// A GET on a table that is not loaded creates it, so only tables listed in
// the table list under the root are read, and only if the kernel this
// process talks to lists them too (the root may be another host's copy).
func (s *System) readSockopt(lf legacyFamily, listed []byte) ([]rules.Table, error) {
	names, err := liveLegacyTables(lf.names, listed)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	tables, err := legacy.ReadTables(lf.family, names, s.SkipChain)
	if err != nil {
		return nil, s.sockoptError(lf, err)
	}
	return tables, nil
}

func (s *System) sockoptError(lf legacyFamily, err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		return &PermissionError{Backend: backend.IptablesLegacy, Err: err}
	}
	return fmt.Errorf("reading %s legacy rules: %w", lf.family, err)
}

// liveLegacyTables returns the tables of listed (a table list read under
// the root) that the calling thread's network namespace lists too: the
// kernel a legacy socket opened on this thread reads, whatever the root.
// None when the module is not loaded there.
func liveLegacyTables(namesPath string, listed []byte) ([]string, error) {
	liveSet, err := tablesHere(namesPath)
	if err != nil || len(liveSet) == 0 {
		return nil, err
	}
	var names []string
	for _, n := range strings.Fields(string(listed)) {
		if slices.Contains(liveSet, n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, nil
}
