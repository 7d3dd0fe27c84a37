package decide

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
)

// Decide picks the backend. TODO(decide): placeholder signature.
func Decide(f facts.Facts, c config.Config) Decision {
	return Decision{}
}
