package expected

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// FlagOptions are the Options `render expected --backend b --kubernetes
// kube --family family --services services` asks for; "" and 0 are "not
// given". b is the parsed --backend (its errors are the command line's).
// An error names the flag and its value, as the command line prints it.
func FlagOptions(b backend.Backend, kube, family string, services int) (Options, error) {
	opts := Options{Backend: b}
	if kube != "" {
		v, err := rke2.ParseVersion(kube)
		if err != nil {
			return opts, fmt.Errorf("--kubernetes: %w", err)
		}
		opts.Kubernetes = v
	}
	switch rules.Family(family) {
	case "":
	case rules.IPv4, rules.IPv6:
		opts.Families = []rules.Family{rules.Family(family)}
	default:
		return opts, fmt.Errorf("--family %q: valid families are ipv4, ipv6", family)
	}
	if services < 0 {
		return opts, fmt.Errorf("--services %d: must be 0 or more", services)
	}
	opts.Services = services
	return opts, nil
}
