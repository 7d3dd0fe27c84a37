package main

import (
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
)

// writeManifest records, per IP family, the "namespace/name" of every
// Service fed to that family's proxier, so a test can check that each one
// made it into the rules (in kube-proxy's rule comments and chain names)
// without knowing how the oracle chooses them.
func writeManifest(path string, c *cluster, fams []v1.IPFamily) error {
	m := map[v1.IPFamily][]string{}
	for _, f := range fams {
		m[f] = []string{}
	}
	for _, s := range c.Services {
		for _, f := range s.Spec.IPFamilies {
			if _, ok := m[f]; ok {
				m[f] = append(m[f], s.Namespace+"/"+s.Name)
			}
		}
	}
	return writeJSON(path, "the manifest", m)
}

// writeJSON writes v to path as indented JSON; what names it in errors.
func writeJSON(path, what string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", what, err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	return nil
}
