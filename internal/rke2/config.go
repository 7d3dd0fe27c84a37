package rke2

import "github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"

// DefaultConfigFile is RKE2's main config when RKE2_CONFIG_FILE is unset.
const DefaultConfigFile = "/etc/rancher/rke2/config.yaml"

// LoadEffective merges mainFile and <mainFile>.d/*.yaml|*.yml exactly as RKE2
// does. TODO(rke2): placeholder signature.
func LoadEffective(root hostfs.Root, mainFile string) (Effective, error) {
	return Effective{}, nil
}
