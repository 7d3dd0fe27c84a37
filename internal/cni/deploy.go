package cni

import "strings"

// RKE2 applies its server manifests directory with k3s's deploy controller
// (k3s-io/k3s pkg/deploy): it walks the directory and its subdirectories,
// sorts the paths, and applies every file whose name ends in .yaml, .yml
// or .json (any case) unless the name starts with a dot or a file named
// NAME.skip exists. The .skip match is by file name alone, anywhere in the
// tree: "a.yaml.skip" parks every "a.yaml". Directory names are not looked
// at, so a dot-directory's files are applied too.

// skipSuffix marks a file that parks another one.
const skipSuffix = ".skip"

// SkipTarget returns the file name a "NAME.skip" entry parks.
func SkipTarget(name string) (string, bool) {
	if !strings.HasSuffix(name, skipSuffix) {
		return "", false
	}
	return strings.TrimSuffix(name, skipSuffix), true
}

// Deployed reports whether the deploy controller applies a file of this
// name; skipped holds the names some NAME.skip entry parks.
func Deployed(name string, skipped map[string]bool) bool {
	if strings.HasPrefix(name, ".") || skipped[name] {
		return false
	}
	lower := strings.ToLower(name)
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}
