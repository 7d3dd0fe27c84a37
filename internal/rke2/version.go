package rke2

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/dotted"
)

// ParseVersion extracts the Kubernetes version from an RKE2 version string:
// "v1.31.2+rke2r1" (rke2 --version, release names), "v1.31.2-rke2r1-0a1b2c3d4e5f"
// (data directory names: runtime image tag plus a 12-hex digest, see RKE2's
// pkg/bootstrap releaseRefDigest) or "v1.31" (a bare minor, as operators
// write it); i.e. v?MAJOR.MINOR[.PATCH] with 1-4, 1-4 and 1-6 digits, then
// nothing or a "-" or "+" suffix. Patch is -1 when the string names only a
// minor. It is hand-written, not a regexp (see package dotted; version_test.go
// checks it against that regexp).
func ParseVersion(s string) (KubeVersion, error) {
	bad := fmt.Errorf("version %q is not an RKE2 or Kubernetes version: expected e.g. v1.31.2+rke2r1, v1.31.2-rke2r1-<digest> or v1.31", s)
	major, minor, patch, rest, ok := dotted.Prefix(strings.TrimPrefix(s, "v"))
	if !ok {
		return KubeVersion{}, bad
	}
	if rest != "" && rest[0] != '-' && rest[0] != '+' || strings.Contains(rest, "\n") {
		return KubeVersion{}, bad
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
