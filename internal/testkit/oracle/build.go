// Package oracle builds and runs kube-proxy's real proxiers (the program in
// test/kubeproxy, which links k8s.io/kubernetes) so tests can compare the
// project's view of a healthy node with the rules kube-proxy itself writes.
// The oracle is its own Go module: the product never links Kubernetes.
package oracle

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Binary returns the oracle program for a Kubernetes minor, building it on
// first use into <repo>/.cache/oracle/<minor>/<hash>/ where the hash covers
// the sources, the minor's mod files, the build tags and the Go version, so
// any change rebuilds and an unchanged tree reuses the binary. Concurrent
// test binaries wait for one another on a lock file instead of building
// twice. A cold build takes minutes (make oracle builds every minor before
// the tests, so the go test timeout never covers it).
func Binary(t testing.TB, minor string) string {
	t.Helper()
	bin, err := kubeProxyOracle.build(minor, "")
	if err != nil {
		t.Fatalf("building the kube-proxy oracle for %s: %v", minor, err)
	}
	return bin
}

// program is one Go program of test/kubeproxy, built per minor with the
// minor's mod file: the oracle (the module's main package) or a helper
// beside it (featuregates).
type program struct {
	pkg   string   // the package to build, relative to test/kubeproxy
	name  string   // the binary's name in its cache directory
	cache []string // its cache directory under .cache/oracle, the minor appended
	globs []string // the sources that key the build, relative to test/kubeproxy
	tags  bool     // whether the minor's build tags apply
	mod   string   // the mod file's name before the minor: "" is "go." (go.<minor>.mod)
	what  string   // what it is, in progress lines: "kube-proxy oracle"
}

var kubeProxyOracle = program{pkg: ".", name: "kubeproxy-oracle", globs: []string{"*.go", "*-stub/go.mod"}, tags: true, what: "kube-proxy oracle"}

// BinaryFor is Binary for another architecture (GOARCH: arm64 for the VM
// tier's arm64 guest, packaging/test/vm.sh), cached apart from this
// machine's builds in .cache/oracle/<goarch>/<minor>/. The oracle is static
// (CGO_ENABLED=0), so cross-building it needs no other toolchain.
func BinaryFor(t testing.TB, minor, goarch string) string {
	t.Helper()
	bin, err := kubeProxyOracle.buildFor(minor, goarch, "")
	if err != nil {
		t.Fatalf("building the kube-proxy oracle for %s (GOARCH=%s): %v", minor, goarch, err)
	}
	return bin
}

// build returns the program's binary for minor on this machine, building
// it when the cache has none; step ("3/6", or "") says where this build is
// among make oracle's, in its progress lines.
func (p program) build(minor, step string) (string, error) {
	return p.buildFor(minor, runtime.GOARCH, step)
}

// buildFor builds for goarch. This machine's builds keep their cache
// directory and key; another architecture's go under its own directory.
func (p program) buildFor(minor, goarch, step string) (string, error) {
	src, err := sourceDir()
	if err != nil {
		return "", err
	}
	modfile := p.modStem() + minor + ".mod"
	if _, err := os.Stat(filepath.Join(src, modfile)); err != nil {
		return "", fmt.Errorf("no %s in %s: add the minor with genmod.sh (see oracle.Minors): %w", modfile, src, err)
	}
	env := append(os.Environ(), BuildEnv(minor)...)
	cacheDir := p.cache
	if goarch != runtime.GOARCH {
		env = append(env, "GOARCH="+goarch)
		cacheDir = append([]string{goarch}, p.cache...)
	}
	goVersion, err := goCommand(src, env, "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION for %s (GOTOOLCHAIN=%q): %w", minor, specs[minor].toolchain, err)
	}
	tags := ""
	if p.tags {
		tags = strings.Join(specs[minor].tags, ",")
	}
	key, err := hashSources(src, p.modStem()+minor, tags, strings.TrimSpace(string(goVersion)), p.globs)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(append([]string{filepath.Dir(filepath.Dir(src)), ".cache", "oracle"}, append(cacheDir, minor)...)...)
	bin := filepath.Join(dir, key, p.name)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	what := p.what + " " + minor
	if step != "" {
		what += " (" + step + ")"
	}
	unlock, err := lock(filepath.Join(dir, ".lock"), what, progressOut, heartbeat)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // another test binary built it while we waited
	}
	tmp := bin + ".tmp"
	args := []string{"build", "-v", "-modfile=" + modfile, "-trimpath", "-o", tmp}
	if tags != "" {
		args = append(args, "-tags="+tags)
	}
	cmd := goCommand(src, env, append(args, p.pkg)...)
	if out, err := runReported(cmd, what, progressOut, heartbeat); err != nil {
		return "", fmt.Errorf("go %s %s in %s: %w\n%s", strings.Join(args, " "), p.pkg, src, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	prune(dir, key)
	return bin, nil
}

// modStem is the start of the program's mod file names: a program that
// needs more modules than the oracle (the API server) has mod files of its
// own, so adding it never changes the oracle's key.
func (p program) modStem() string {
	if p.mod == "" {
		return "go."
	}
	return p.mod
}

// BuildEnv is the environment, on top of the caller's, that builds or runs
// Go in test/kubeproxy with minor's mod file: static (boot tests copy the
// oracle into a container), no workspace, the mod file as it is, and the
// minor's toolchain when it needs another one.
func BuildEnv(minor string) []string {
	env := []string{"CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly"}
	if tc := specs[minor].toolchain; tc != "" {
		env = append(env, "GOTOOLCHAIN="+tc)
	}
	return env
}

func goCommand(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = env
	return cmd
}

// sourceDir finds test/kubeproxy by walking up from the working directory
// (a package directory when run by go test).
func sourceDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		src := filepath.Join(dir, "test", "kubeproxy")
		if _, err := os.Stat(filepath.Join(src, "go.mod")); err == nil {
			return src, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no test/kubeproxy/go.mod above the working directory: run from inside the repository")
		}
		dir = parent
	}
}

// hashSources keys a build: the program's sources (globs: its .go files and
// the stub modules' go.mod files, as a mod file may replace a module by
// one), go.mod, the mod and sum files named by modMinor (go.v1.37 for
// go.v1.37.mod), the tags and the Go version (the minor's toolchain's).
func hashSources(src, modMinor, tags, goVersion string, globs []string) (string, error) {
	var files []string
	for _, g := range globs {
		matched, err := filepath.Glob(filepath.Join(src, g))
		if err != nil {
			return "", err
		}
		files = append(files, matched...)
	}
	files = append(files, filepath.Join(src, "go.mod"), filepath.Join(src, modMinor+".mod"), filepath.Join(src, modMinor+".sum"))
	sort.Strings(files)
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", strings.TrimPrefix(modMinor, "go."), tags, goVersion)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("hashing the oracle sources: %w", err)
		}
		rel, _ := filepath.Rel(src, f)
		fmt.Fprintf(h, "%s\x00%d\x00", rel, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// lock takes an exclusive flock on path; the returned func releases it.
// While another process holds it (a build of what in another test binary
// or worktree sharing .cache), it says so every interval.
func lock(path, what string, out io.Writer, interval time.Duration) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("oracle build lock: %w", err)
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		err = waitLock(f, path, what, out, interval)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("oracle build lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

func waitLock(f *os.File, path, what string, out io.Writer, interval time.Duration) error {
	start := time.Now()
	fmt.Fprintf(out, "oracle: waiting for another process's build of %s (it holds %s)...\n", what, path)
	done := make(chan error, 1)
	go func() { done <- syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			fmt.Fprintf(out, "oracle: still waiting for another process's build of %s: %s so far\n", what, time.Since(start).Round(time.Second))
		}
	}
}

// keepBuilds is how many builds of a minor the cache keeps: worktrees of
// the same repository share .cache, and a tree whose oracle sources differ
// must not delete the build another tree's tests are running.
const keepBuilds = 3

// prune removes the minor's older builds, keeping keep and the newest
// others up to keepBuilds.
func prune(dir, keep string) {
	entries, _ := os.ReadDir(dir)
	type build struct {
		name string
		mod  time.Time
	}
	var others []build
	for _, e := range entries {
		if !e.IsDir() || e.Name() == keep {
			continue
		}
		if info, err := e.Info(); err == nil {
			others = append(others, build{e.Name(), info.ModTime()})
		}
	}
	sort.Slice(others, func(i, j int) bool { return others[i].mod.After(others[j].mod) })
	for i, b := range others {
		if i >= keepBuilds-1 {
			os.RemoveAll(filepath.Join(dir, b.name))
		}
	}
}
