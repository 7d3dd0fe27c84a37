package rke2

import (
	"fmt"
	"regexp"
	"strconv"
)

// versionPattern matches the version strings RKE2 leaves on a node:
// "v1.31.2+rke2r1" (rke2 --version, release names), "v1.31.2-rke2r1-0a1b2c3d4e5f"
// (data directory names: runtime image tag plus a 12-hex digest, see RKE2's
// pkg/bootstrap releaseRefDigest) and "v1.31" (a bare minor, as operators write it).
var versionPattern = regexp.MustCompile(`^v?([0-9]{1,4})\.([0-9]{1,4})(?:\.([0-9]{1,6}))?(?:[-+].*)?$`)

// ParseVersion extracts the Kubernetes version from an RKE2 version string.
// Patch is -1 when the string names only a minor.
func ParseVersion(s string) (KubeVersion, error) {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return KubeVersion{}, fmt.Errorf("version %q is not an RKE2 or Kubernetes version: expected e.g. v1.31.2+rke2r1, v1.31.2-rke2r1-<digest> or v1.31", s)
	}
	major, _ := strconv.Atoi(m[1]) // the pattern bounds the digits, so Atoi cannot fail
	minor, _ := strconv.Atoi(m[2])
	patch := -1
	if m[3] != "" {
		patch, _ = strconv.Atoi(m[3])
	}
	if major == 0 {
		// The zero major is KubeVersion's "unknown"; no Kubernetes release has it.
		return KubeVersion{}, fmt.Errorf("version %q has major version 0: no Kubernetes release has it", s)
	}
	return KubeVersion{Major: major, Minor: minor, Patch: patch}, nil
}

// String renders "v1.31.2", or "v1.31" when the patch is unknown, or "" when unknown.
func (v KubeVersion) String() string {
	if !v.Known() {
		return ""
	}
	if v.Patch < 0 {
		return fmt.Sprintf("v%d.%d", v.Major, v.Minor)
	}
	return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
}
