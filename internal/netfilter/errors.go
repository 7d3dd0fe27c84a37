package netfilter

import (
	"errors"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// NotInstalledError says a backend's tool is not on this host, so its
// rules cannot be read (they may still exist in the kernel).
type NotInstalledError struct {
	Backend backend.Backend
	Binary  string
	Err     error
}

func (e *NotInstalledError) Error() string {
	return (&hostfs.MissingToolError{Tool: e.Binary, For: "reading " + string(e.Backend) + " rules", Err: e.Err}).Error()
}

func (e *NotInstalledError) Unwrap() error { return e.Err }

// IsNotInstalled reports whether err says a backend's tool is missing.
func IsNotInstalled(err error) bool {
	var e *NotInstalledError
	return errors.As(err, &e)
}

// PermissionError says the kernel refused to show the rules: reading
// netfilter state needs CAP_NET_ADMIN (run as root).
type PermissionError struct {
	Backend backend.Backend
	Err     error
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("reading %s rules: permission denied (run as root, CAP_NET_ADMIN is needed): %v", e.Backend, e.Err)
}

func (e *PermissionError) Unwrap() error { return e.Err }

// IsPermission reports whether err is a refused read.
func IsPermission(err error) bool {
	var e *PermissionError
	return errors.As(err, &e)
}
