package hostfs

import (
	"path"
	"path/filepath"
)

// ResolveEntry is hostPath's own directory entry under the root: its
// directory resolved as Resolve does (links followed, contained), its last
// component not followed. What lstats, removes or touches a file the
// program owns acts on the entry itself, so a link planted there is
// seen (or replaced), never its target.
func (r Root) ResolveEntry(hostPath string) (string, error) {
	dir, err := r.Resolve(path.Dir(hostPath))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path.Base(hostPath)), nil
}
