package facts

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// imageKernel takes the release of a root with no running kernel under it
// from the kernel installed in it, which makes the root an image: each directory
// /lib/modules/<release> with that release's config or image beside it
// (/boot/config-<release>, /boot/vmlinuz-<release>, or their places on
// Fedora and ostree). With several, the newest is judged, as a bootloader
// boots it by default, and the others are named.
func (p *probe) imageKernel(k Kernel) Kernel {
	entries, _ := p.root.ReadDir(hostfs.ModulesDir)
	var found []string
	for _, e := range entries {
		if r := e.Name(); p.kernelInstalled(r) {
			found = append(found, r)
		}
	}
	chosen, others := PickRelease(found)
	if chosen == "" {
		p.problem("%s is missing and no kernel is installed under --root (no %s/<release> beside /boot/config-<release> or /boot/vmlinuz-<release>): the kernel release is unknown, so version-dependent kernel checks cannot be made.", hostfs.KernelOSRelease, hostfs.ModulesDir)
		return k
	}
	p.image = true
	k.Release, k.ReleaseSource = chosen, fmt.Sprintf("installed in the image: %s/%s", hostfs.ModulesDir, chosen)
	k.Major, k.Minor, k.Patch, _ = ParseRelease(chosen)
	if len(others) > 0 {
		p.notInImage("Which kernel the image boots: it has %s and %s; the newest, %s, is judged here (--kernel-release judges another).", strings.Join(others, ", "), chosen, chosen)
	}
	return k
}

// kernelInstalled reports whether release names a kernel installed in the
// root: a usable release with its config or image in a known place.
func (p *probe) kernelInstalled(release string) bool {
	if _, why := checkRelease([]byte(release)); why != "" {
		return false
	}
	for _, f := range append(hostfs.KernelConfigFiles(release), hostfs.KernelImageFiles(release)...) {
		if strings.Contains(f, release) && p.root.Exists(f) {
			return true
		}
	}
	return false
}

// PickRelease chooses the newest of kernel releases (as CompareReleases
// orders them) and returns the rest, newest first; "" when there is none.
func PickRelease(releases []string) (newest string, others []string) {
	if len(releases) == 0 {
		return "", nil
	}
	sorted := slices.Clone(releases)
	slices.SortFunc(sorted, func(a, b string) int { return CompareReleases(b, a) })
	sorted = slices.Compact(sorted)
	return sorted[0], sorted[1:]
}

// CompareReleases orders kernel releases as version numbers: runs of
// digits compare by value ("6.1.0-57" is newer than "6.1.0-9"), anything
// else byte by byte, and equal runs go on to the next. It is a total
// order: releases that differ never compare equal.
func CompareReleases(a, b string) int {
	for a != "" && b != "" {
		ra, rb := run(a), run(b)
		a, b = a[len(ra):], b[len(rb):]
		if c := compareRun(ra, rb); c != 0 {
			return c
		}
	}
	return strings.Compare(a, b)
}

// run is s's leading run of digits, or of non-digits.
func run(s string) string {
	digit := isDigit(s[0])
	i := 1
	for i < len(s) && isDigit(s[i]) == digit {
		i++
	}
	return s[:i]
}

// compareRun compares two runs: numbers by value (leading zeros aside,
// then by their spelling, so "01" and "1" still differ), others by bytes.
func compareRun(a, b string) int {
	if !isDigit(a[0]) || !isDigit(b[0]) {
		return strings.Compare(a, b)
	}
	ta, tb := strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(ta) != len(tb) {
		return len(ta) - len(tb)
	}
	if c := strings.Compare(ta, tb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
