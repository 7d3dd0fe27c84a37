// Package version holds the one version string, stamped at link time by the
// Makefile (-X .../internal/version.Version=...) from the VERSION file, so
// the binary and the packages always agree.
package version

// Version is overwritten by -ldflags; "dev" marks an unstamped build.
var Version = "dev"
