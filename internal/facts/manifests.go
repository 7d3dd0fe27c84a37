package facts

import (
	"io/fs"
	"path"
	"sort"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cni"
)

// Bounds of the walk over RKE2's server manifests directory. RKE2 stages
// about twenty files there; an operator adds a few, sometimes in
// subdirectories. The deploy controller itself has no bounds, so past them
// what is not read is said.
const (
	// maxManifests bounds the manifest files read.
	maxManifests = 1024
	// maxManifestEntries bounds the names listed over the whole walk.
	maxManifestEntries = 4 * maxManifests
	// maxManifestDepth bounds the directory levels below the top.
	maxManifestDepth = 8
)

// manifestWalk lists the files RKE2's deploy controller applies from one
// directory tree (cni.Deployed), the way it walks it: every subdirectory,
// dot-directories too; a file that is a symlink is read through it; a
// symlink to a directory is followed, but not the directory links found
// inside a followed one (k3s follows only links it meets outside them, so
// a link cannot make a loop). Reads stay under the probe's root, so a link
// cannot lead outside it.
type manifestWalk struct {
	p       *probe
	top     string
	files   []string
	broken  map[string]error // links whose target cannot be read
	skipped map[string]bool
	seen    int
	full    bool // a bound was reached and said
}

// manifestFiles returns the host paths of the manifests RKE2 applies from
// dir, sorted as the controller sorts them (by path, byte by byte).
func (p *probe) manifestFiles(dir string) []string {
	w := &manifestWalk{p: p, top: dir, broken: map[string]error{}, skipped: map[string]bool{}}
	w.walk(dir, 0, false)
	var out []string
	for _, f := range w.files {
		if !cni.Deployed(path.Base(f), w.skipped) {
			continue
		}
		if err := w.broken[f]; err != nil {
			p.unreadable("%s: a symlink whose target cannot be read (%s): RKE2 cannot apply it, and the CNI settings it was to hold are unknown; fix or remove the link", f, errText(err))
			continue
		}
		out = append(out, f)
	}
	sort.Strings(out)
	if len(out) > maxManifests {
		p.unreadable("%s: more than %d manifests: only the first %d are read, so the CNI's HelmChartConfigs in the rest are unknown; move files out", dir, maxManifests, maxManifests)
		out = out[:maxManifests]
	}
	return out
}

func (w *manifestWalk) walk(dir string, depth int, viaLink bool) {
	if depth > maxManifestDepth {
		w.p.unreadable("%s: more than %d directory levels below %s: the CNI's HelmChartConfigs in it are not read; move them up", dir, maxManifestDepth, w.top)
		return
	}
	room := maxManifestEntries - w.seen
	if room <= 0 {
		w.tooMany()
		return
	}
	entries, err := w.p.root.ReadDirMax(dir, room)
	if err != nil {
		switch {
		case depth == 0 && isNotExist(err):
			return // not a server, or RKE2 never ran
		case len(entries) == room:
			w.tooMany()
		default:
			w.p.unreadable("%s: %s: the CNI's HelmChartConfigs in it are unknown; check the directory", dir, errText(err))
			return
		}
	}
	w.seen += len(entries)
	for _, e := range entries {
		name := e.Name()
		file := path.Join(dir, name)
		if target, ok := cni.SkipTarget(name); ok {
			w.skipped[target] = true
		}
		switch t := e.Type(); {
		case t.IsDir():
			w.walk(file, depth+1, viaLink)
		case t&fs.ModeSymlink != 0:
			fi, err := w.p.root.Stat(file)
			switch {
			case err != nil:
				w.broken[file] = err
				w.files = append(w.files, file)
			case fi.IsDir() && !viaLink:
				w.walk(file, depth+1, true)
			case !fi.IsDir():
				w.files = append(w.files, file)
			}
		default:
			// Regular files, and anything else with a manifest's name,
			// which the bounded read refuses with a clear message.
			w.files = append(w.files, file)
		}
	}
}

func (w *manifestWalk) tooMany() {
	if !w.full {
		w.full = true
		w.p.unreadable("%s: more than %d entries: the rest are not read, so the CNI's HelmChartConfigs in them are unknown; move files out", w.top, maxManifestEntries)
	}
}
