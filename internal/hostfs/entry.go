package hostfs

import (
	"path"
	"path/filepath"
)

// ResolveEntry is hostPath's own directory entry under the root: its
// directory resolved as Resolve does (links followed, contained), its last
// component not followed. What lstats, removes or touches a file the
// program owns acts on the entry itself, so a link planted there is
// seen (or replaced), never its target. hostPath is cleaned as rooted
// at "/" first, so "a/b/" or "a/./b" name the entry b, as Path does.
func (r Root) ResolveEntry(hostPath string) (string, error) {
	clean := path.Clean("/" + hostPath)
	dir, err := r.Resolve(path.Dir(clean))
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, path.Base(clean)), nil
}
