package netfilter

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// Fake is an in-memory Reader for unit tests. Like the kernel, it hands
// out copies: changing a returned Ruleset does not change the Fake, and a
// backend with nothing set reads as an empty ruleset. Its ReadOptions shape
// what Read returns as System's do (verify.ReadOptions for verify's shapes).
type Fake struct {
	ReadOptions

	mu       sync.Mutex
	rulesets map[backend.Backend]*rules.Ruleset
	errs     map[backend.Backend]error
}

// NewFake returns a Fake holding copies of rulesets (one per backend).
func NewFake(rulesets ...*rules.Ruleset) *Fake {
	f := &Fake{rulesets: map[backend.Backend]*rules.Ruleset{}, errs: map[backend.Backend]error{}}
	for _, rs := range rulesets {
		f.Set(rs)
	}
	return f
}

// Set replaces the ruleset of rs.Backend with a copy of rs.
func (f *Fake) Set(rs *rules.Ruleset) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rulesets[rs.Backend] = rules.Normalize(rs)
}

// SetError makes reads of b fail with err (nil clears it).
func (f *Fake) SetError(b backend.Backend, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[b] = err
}

// Read implements Reader.
func (f *Fake) Read(ctx context.Context, b backend.Backend) (*rules.Ruleset, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := backend.Parse(string(b)); err != nil {
		return nil, fmt.Errorf("reading rules: %w", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.errs[b]; err != nil {
		return nil, err
	}
	if rs, ok := f.rulesets[b]; ok {
		return f.shape(rules.Clone(rs)), nil
	}
	return &rules.Ruleset{Backend: b}, nil
}

// Dump returns the canonical text of every backend, in backend order.
func (f *Fake) Dump() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	for _, name := range backend.All {
		if rs, ok := f.rulesets[name]; ok {
			b.WriteString(rules.Format(rs))
		}
	}
	return b.String()
}

var (
	_ Reader = (*Fake)(nil)
	_ Reader = (*System)(nil)
)
