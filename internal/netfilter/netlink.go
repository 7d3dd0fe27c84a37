package netfilter

import (
	"context"
	"errors"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

func readNetlink(ctx context.Context, b backend.Backend) (*rules.Ruleset, error) {
	return nil, errors.New("TODO")
}
