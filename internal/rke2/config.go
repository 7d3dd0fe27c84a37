package rke2

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// LoadEffective merges mainFile and <mainFile>.d/*.yaml|*.yml exactly as RKE2
// does. A host without any config file yields an empty Effective, not an error.
func LoadEffective(root hostfs.Root, mainFile string) (Effective, error) {
	return LoadEffectiveOf(root, mainFile, ProgramRKE2)
}

// ProgramRKE2 is the name errors give the config's owner unless told
// otherwise: k3s reads the same files the same way (RKE2 uses k3s's
// pkg/configfilearg), so only the name in an error differs.
const ProgramRKE2 = "RKE2"

// LoadEffectiveOf is LoadEffective whose errors name program's config
// ("k3s config /etc/rancher/k3s/config.yaml: ..."): the operator must
// know whose file to fix.
func LoadEffectiveOf(root hostfs.Root, mainFile, program string) (Effective, error) {
	files, err := ReadFilesOf(root, mainFile, program)
	if err != nil {
		return Effective{}, err
	}
	return Merge(files), nil
}

// File is one RKE2 config file as written: keys exactly as in the file
// (including a trailing "+").
type File struct {
	Path   string         `json:"path"`
	Values map[string]any `json:"values"`
	// Items are the file's top-level entries in file order, duplicates
	// included. RKE2 applies them one by one, so "key:" then "key+:" in one
	// file differs from the reverse; Values alone cannot say which came first.
	// Merge uses Items when set, else Values in key order.
	Items []Item `json:"items,omitempty"`
}

// Item is one top-level "key: value" of a config file.
type Item struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
	Line  int    `json:"line"`
}

// ReadFiles reads mainFile and its drop-ins in RKE2's order: the main file
// when it exists, then regular files in <mainFile>.d whose names end in
// .yaml or .yml (any case, as k3s's configfilearg checks), in byte-lexical
// name order. Unknown keys are kept: RKE2 skips them with a warning, and
// whether a key matters is the caller's business.
func ReadFiles(root hostfs.Root, mainFile string) ([]File, error) {
	return ReadFilesOf(root, mainFile, ProgramRKE2)
}

// ReadFilesOf is ReadFiles whose errors name program's config.
func ReadFilesOf(root hostfs.Root, mainFile, program string) ([]File, error) {
	mainFile = path.Clean("/" + mainFile)
	var names []string
	if _, err := root.Stat(mainFile); err == nil {
		names = append(names, mainFile)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read %s config %s: %w", program, mainFile, hostErr(err))
	}
	dropIns, err := dropInFiles(root, mainFile+".d", program)
	if err != nil {
		return nil, err
	}
	names = append(names, dropIns...)

	files := make([]File, 0, len(names))
	for _, name := range names {
		data, err := root.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read %s config %s: %w", program, name, hostErr(err))
		}
		f, err := parseFileOf(name, data, program)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// dropInFiles lists dir's config drop-ins; a missing dir has none.
func dropInFiles(root hostfs.Root, dir, program string) ([]string, error) {
	entries, err := root.ReadDir(dir) // sorted by name, byte-wise, like RKE2's os.ReadDir
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s config drop-ins in %s: %w", program, dir, hostErr(err))
	}
	var names []string
	for _, e := range entries {
		lower := strings.ToLower(e.Name())
		if e.IsDir() || !(strings.HasSuffix(lower, ".yaml") || strings.HasSuffix(lower, ".yml")) {
			continue
		}
		names = append(names, path.Join(dir, e.Name()))
	}
	return names, nil
}

// hostErr drops *fs.PathError's path, which is the on-disk path under the
// root; our messages name the host path themselves and must read the same
// under any --root.
func hostErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
