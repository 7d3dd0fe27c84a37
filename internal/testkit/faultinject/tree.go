package faultinject

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Tree is a directory's content for comparisons: each entry's relative
// path mapped to its type, mode and bytes (a link's target).
type Tree map[string]string

// Snapshot reads every entry under dir.
func Snapshot(dir string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			t[rel] = "link -> " + target
			return err
		case d.IsDir():
			t[rel] = fmt.Sprintf("dir %v", fi.Mode())
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			t[rel] = fmt.Sprintf("file %v %q", fi.Mode(), data)
			return err
		default:
			t[rel] = fmt.Sprintf("special %v", fi.Mode())
		}
		return nil
	})
	return t, err
}

// Diff lists the entries that differ between a and b, leaving out those
// ignore says are not the caller's to compare.
func (a Tree) Diff(b Tree, ignore func(rel string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range []Tree{a, b} {
		for rel := range m {
			if seen[rel] || ignore != nil && ignore(rel) {
				continue
			}
			seen[rel] = true
			if a[rel] != b[rel] {
				out = append(out, fmt.Sprintf("%s: %s -> %s", rel, short(a[rel]), short(b[rel])))
			}
		}
	}
	sort.Strings(out)
	return out
}

func short(s string) string {
	switch {
	case s == "":
		return "(none)"
	case len(s) > 120:
		return s[:120] + "..."
	}
	return s
}

// tempNames are the temp files the program makes: hostfs.WriteFileAtomic's
// ".NAME.tmp-DIGITS", and the links renamed into place by the switch
// (".NAME.link-tmp") and by apply on k3s ("NAME.rke2-proxy-backend.tmp").
var tempNames = regexp.MustCompile(`(^\..+\.tmp-[0-9]+$)|(\.link-tmp$)|(\.rke2-proxy-backend\.tmp$)`)

// IsTemp reports whether a file name is one of the program's temp files.
func IsTemp(name string) bool { return tempNames.MatchString(name) }

// Temps lists the program's temp files under dir.
func (t Tree) Temps() []string {
	var out []string
	for rel := range t {
		if IsTemp(filepath.Base(rel)) && !strings.HasPrefix(t[rel], "dir ") {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}
