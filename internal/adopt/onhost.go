package adopt

import (
	"context"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// HostError is a host whose facts or config cannot be read: nothing is
// adopted, and the command line exits 2 (a usage or configuration error).
type HostError struct{ Err error }

func (e *HostError) Error() string {
	return e.Err.Error() + "; nothing adopted: fix it first, the generator's choice depends on it"
}

func (e *HostError) Unwrap() error { return e.Err }

// OnHost is adoption as the command line runs it on host: host's facts
// (RKE2's version asked of its binary) and config, production's rule
// reader, then Run.
func OnHost(ctx context.Context, host hostplan.Host, o Options) (Result, error) {
	p, err := hostplan.Load(host, facts.Options{RKE2Binary: true})
	if err != nil {
		return Result{}, &HostError{Err: err}
	}
	o.Root, o.Facts, o.Config, o.Reader = host.Root, p.Facts, p.Config, verify.NewReader(host.Root)
	return Run(ctx, o)
}
