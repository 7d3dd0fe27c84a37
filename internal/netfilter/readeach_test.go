package netfilter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Reading every backend, a missing tool is reported and left out and the
// rest come back in backend.All's order; asked for that backend alone, or
// on any other error, the read fails with the reader's error.
func TestReadEachSkipsOnlyAMissingToolAmongSeveral(t *testing.T) {
	missing := &NotInstalledError{Backend: backend.IptablesNFT, Binary: "/usr/sbin/iptables-nft-save", Err: fs.ErrNotExist}
	f := NewFake()
	f.SetError(backend.IptablesNFT, missing)
	var skipped []string
	got, err := ReadEach(context.Background(), f, "", func(b backend.Backend, err error) {
		skipped = append(skipped, fmt.Sprintf("%s: %v", b, err))
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{string(backend.IptablesNFT) + ": " + missing.Error()}; fmt.Sprint(skipped) != fmt.Sprint(want) {
		t.Errorf("skipped %q, want %q", skipped, want)
	}
	var read []backend.Backend
	for _, rs := range got {
		read = append(read, rs.Backend)
	}
	if want := []backend.Backend{backend.IptablesLegacy, backend.NFTables}; fmt.Sprint(read) != fmt.Sprint(want) {
		t.Errorf("read %v, want %v", read, want)
	}

	noSkip := func(b backend.Backend, err error) { t.Errorf("skipped %s (%v) reading one backend", b, err) }
	if _, err := ReadEach(context.Background(), f, backend.IptablesNFT, noSkip); !errors.Is(err, missing) {
		t.Errorf("the one backend asked for without its tool: %v, want %v", err, missing)
	}
	broken := errors.New("netlink: permission denied")
	f.SetError(backend.IptablesNFT, nil)
	f.SetError(backend.NFTables, broken)
	if got, err := ReadEach(context.Background(), f, "", noSkip); !errors.Is(err, broken) || got != nil {
		t.Errorf("another error: %v, %v; want %v and nothing read", got, err, broken)
	}
	if got, err := ReadEach(context.Background(), f, backend.NFTables, noSkip); !errors.Is(err, broken) || got != nil {
		t.Errorf("another error, one backend: %v, %v; want %v", got, err, broken)
	}
	if got, err := ReadEach(context.Background(), f, backend.IptablesLegacy, noSkip); err != nil || len(got) != 1 || got[0].Backend != backend.IptablesLegacy {
		t.Errorf("one backend: %v, %v; want its ruleset alone", rules.Rulesets(got), err)
	}
}
