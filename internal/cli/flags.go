package cli

import (
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// backendFlag parses the value of a backend flag (--backend) into a
// backend, naming the flag in the error; "" is "not given", or an error
// listing the choices when the command needs one.
func backendFlag(flag, value string, required bool) (backend.Backend, error) {
	if value == "" {
		if required {
			return "", fmt.Errorf("%s is required: one of %s", flag, backend.Names())
		}
		return "", nil
	}
	b, err := backend.Parse(value)
	if err != nil {
		return "", fmt.Errorf("%s: %w", flag, err)
	}
	return b, nil
}

// backendOrAll parses a backend flag that also takes "all": "" means all.
func backendOrAll(flag, value string) (backend.Backend, error) {
	if value == "all" {
		return "", nil
	}
	b, err := backend.Parse(value)
	if err != nil {
		return "", fmt.Errorf("%s: %w (or all)", flag, err)
	}
	return b, nil
}
