package config

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// CheckNamed refuses a config file the operator named (--config) when it
// is missing. Only the default path may be absent, where it means the
// built-in defaults: an operator who names a file expects it to be read,
// and quietly running on defaults instead would hide a typo until the
// wrong backend is live. The error does not name file: the caller says
// which flag gave it.
func CheckNamed(root hostfs.Root, file string) error {
	if _, err := root.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		return nil // present, or unreadable: Load names that problem
	}
	where := ""
	if !root.IsHost() {
		where = " under --root " + root.Dir()
	}
	return fmt.Errorf("no such file%s: fix the path, or leave out --config to read %s (the built-in defaults when that is missing too)", where, hostfs.ConfigFile)
}
