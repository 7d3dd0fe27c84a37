package hostfs

import (
	"errors"
	"io/fs"
	"os"
)

// CheckRoot refuses a root (--root, RKE2_PROXY_BACKEND_ROOT) that is not a
// directory: every read under it would find nothing, and a decision made on
// nothing (built-in defaults, no kernel, no RKE2) reads as confident as one
// made on a real host. The real root is not looked at. The error does not
// name dir: the caller says which setting gave it.
func CheckRoot(dir string) error {
	if dir == "/" {
		return nil
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such directory: fix the path to the host root to read (a directory with etc/, proc/, usr/ ...), or leave it out for this host")
	case err != nil:
		return err
	case !fi.IsDir():
		return errors.New("not a directory: --root names the directory a host's files are under")
	}
	return nil
}
