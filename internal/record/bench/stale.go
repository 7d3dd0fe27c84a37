package bench

import (
	"fmt"
	"io/fs"
)

// StatFunc stats a host path (through hostfs.Root in production).
type StatFunc func(hostPath string) (fs.FileInfo, error)

// Stale says why the report no longer describes this node ("" when it
// still does): the kernel release differs, or a loader binary it measured
// is gone or was replaced (size or mtime changed, as a package upgrade
// does). Binaries are compared by stat, not by running them: the generator
// and facts never run programs.
func Stale(rep Report, kernelRelease string, stat StatFunc) string {
	if rep.Kernel != kernelRelease {
		return fmt.Sprintf("it was measured on kernel %s and this is %s", orUnknown(rep.Kernel), orUnknown(kernelRelease))
	}
	for _, t := range rep.Tools {
		fi, err := stat(t.Path)
		if err != nil {
			return fmt.Sprintf("%s (%s) it measured is gone", t.Path, t.Name)
		}
		if fi.Size() != t.Size || fi.ModTime().UnixNano() != t.ModTimeNs {
			return fmt.Sprintf("%s (%s, measured as %q) has changed since", t.Path, t.Name, t.Version)
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
