package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// FeatureGates returns test/kubeproxy/featuregates built for a Kubernetes
// minor (one of Minors): kube-proxy's own feature gate registry, asked what
// it makes of --feature-gates values. Built on first use with the minor's
// mod file (seconds once the oracle's build cache is warm) into
// <repo>/.cache/oracle/featuregates/<minor>/<hash>/, beside the oracles'
// directories so neither build prunes the other's.
func FeatureGates(t testing.TB, minor string) string {
	t.Helper()
	bin, err := buildFeatureGates(minor)
	if err != nil {
		t.Fatalf("building kube-proxy's feature gate registry for %s: %v", minor, err)
	}
	return bin
}

func buildFeatureGates(minor string) (string, error) {
	src, err := sourceDir()
	if err != nil {
		return "", err
	}
	modfile := "go." + minor + ".mod"
	goVersion, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %w", err)
	}
	files, err := filepath.Glob(filepath.Join(src, "featuregates", "*.go"))
	if err != nil {
		return "", err
	}
	files = append(files, filepath.Join(src, "go.mod"), filepath.Join(src, modfile), filepath.Join(src, "go."+minor+".sum"))
	sort.Strings(files)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", minor, strings.TrimSpace(string(goVersion)))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("hashing the featuregates sources: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f[len(src):], len(b))
		h.Write(b)
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	dir := filepath.Join(filepath.Dir(filepath.Dir(src)), ".cache", "oracle", "featuregates", minor)
	bin := filepath.Join(dir, key, "featuregates")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lock(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp := bin + ".tmp"
	cmd := exec.Command("go", "build", "-modfile="+modfile, "-trimpath", "-o", tmp, "./featuregates")
	cmd.Dir = src
	// The oracle's flags, so its build cache serves the Kubernetes packages.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build -modfile=%s ./featuregates in %s: %w\n%s", modfile, src, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	prune(dir, key)
	return bin, nil
}
