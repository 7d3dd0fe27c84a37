package rke2

import "github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"

// DefaultConfigFile is RKE2's main config when RKE2_CONFIG_FILE is unset.
const DefaultConfigFile = "/etc/rancher/rke2/config.yaml"

// LoadEffective merges mainFile and <mainFile>.d/*.yaml|*.yml exactly as RKE2
// does. TODO(rke2): placeholder signature.
func LoadEffective(root hostfs.Root, mainFile string) (Effective, error) {
	return Effective{}, nil
}

// File is one RKE2 config file as written: keys exactly as in the file
// (including a trailing "+").
type File struct {
	Path   string         `json:"path"`
	Values map[string]any `json:"values"`
}

// ReadFiles reads mainFile and its drop-ins in RKE2's order. TODO(rke2).
func ReadFiles(root hostfs.Root, mainFile string) ([]File, error) {
	return nil, nil
}

// Merge folds files into the effective config exactly as RKE2 does. TODO(rke2).
func Merge(files []File) Effective {
	return Effective{}
}
