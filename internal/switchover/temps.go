package switchover

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
)

// sweepTemps removes what a switch killed mid-write left: the temp files of
// the config's and the journal's atomic writes (the config's is a copy of
// the operator's file) and relink's temp link. The caller holds the node
// lock and found no live switch: a switch writes those files only while it
// holds the lock, so none has a writer left. j is the journal found (nil
// for none): its config may have been a link to somewhere else by now.
func (r Request) sweepTemps(j *switchjournal.Journal) ([]string, error) {
	files := []string{hostfs.SwitchJournal, r.ConfigFile}
	if t, err := (FileConfig{Root: r.Root, File: r.ConfigFile}).target(); err == nil {
		files = append(files, t)
	}
	if j != nil && j.Config.Link != "" {
		link := j.Config.Link
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(r.ConfigFile), link)
		}
		files = append(files, link)
	}
	var removed []string
	var errs []error
	for _, f := range files {
		got, err := r.Root.RemoveStaleTemps(f)
		removed, errs = append(removed, got...), append(errs, err)
	}
	tmp := linkTemp(r.ConfigFile)
	if _, err := os.Lstat(r.Root.Path(tmp)); err == nil {
		if err := r.Root.RemoveFile(tmp); err != nil {
			errs = append(errs, err)
		} else {
			removed = append(removed, r.Root.Path(tmp))
		}
	}
	return removed, errors.Join(errs...)
}

// linkTemp is where relink makes the new link before renaming it over file.
func linkTemp(file string) string {
	return filepath.Join(filepath.Dir(file), "."+filepath.Base(file)+".link-tmp")
}
