// Package selinux holds the SELinux policy module for the generator's
// domain (rke2_proxy_backend.te, .fc, .if; compiled by
// packaging/test/selinux.sh) and the list of what the generator touches at
// boot that the policy allows (generator-reads.txt); its test measures the
// real generator against that list.
package selinux

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// TestGeneratorTouchesOnlyWhatThePolicyAllows runs the real generator
// binary under strace on the input root of every generator golden case
// (generator/testdata/golden/*/root.txtar) and holds every path it reads,
// lists, stats, follows, creates or writes to generator-reads.txt.
func TestGeneratorTouchesOnlyWhatThePolicyAllows(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		testhost.Unmet(t, "needs strace (Debian package strace)")
	}
	allowed := readAllowed(t)
	bin := buildGenerator(t)
	cases, err := filepath.Glob("../../generator/testdata/golden/*/root.txtar")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no generator golden roots (%v)", err)
	}
	outside := map[string][]string{} // "kind path" -> cases
	used := map[string]bool{}
	for _, c := range cases {
		name := filepath.Base(filepath.Dir(c))
		for _, a := range trace(t, bin, c) {
			p, ok := allowed.match(a.kind, a.path)
			if !ok {
				key := a.kind + " " + a.path
				if cs := outside[key]; len(cs) == 0 || cs[len(cs)-1] != name {
					outside[key] = append(cs, name)
				}
				continue
			}
			used[p] = true
		}
	}
	var lines []string
	for k, cs := range outside {
		lines = append(lines, fmt.Sprintf("%s (%s)", k, strings.Join(cs, ", ")))
	}
	sort.Strings(lines)
	if len(lines) > 0 {
		t.Errorf("the generator touches %d paths generator-reads.txt does not list: add them there (with why), "+
			"to rke2_proxy_backend.te and to docs/selinux.md, or keep the generator from touching them:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	t.Logf("%d golden roots, %d of %d patterns used", len(cases), len(used), len(allowed))
}

// access is one path the generator touched: kind read or write.
type access struct{ kind, path string }

type pattern struct{ kind, glob string }

type allowList []pattern

func readAllowed(t *testing.T) allowList {
	t.Helper()
	f, err := os.Open("generator-reads.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out allowList
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 2 || (fields[0] != "read" && fields[0] != "write") || !strings.HasPrefix(fields[1], "/") && !strings.HasPrefix(fields[1], "$GENERATOR") {
			t.Fatalf("generator-reads.txt:%d: want KIND PATTERN [why], KIND read or write, PATTERN a host path: %q", n, sc.Text())
		}
		out = append(out, pattern{fields[0], fields[1]})
	}
	return out
}

// match finds the pattern that covers a kind of access to p. A read of a
// directory above a pattern is covered: following a path reads each
// directory on it.
func (l allowList) match(kind, p string) (string, bool) {
	for _, pt := range l {
		if pt.kind != kind {
			continue
		}
		if globMatch(pt.glob, p) {
			return pt.glob, true
		}
		if kind == "read" && ancestor(pt.glob, p) {
			return pt.glob, true
		}
	}
	return "", false
}

func globMatch(glob, p string) bool {
	if prefix, ok := strings.CutSuffix(glob, "/**"); ok {
		if ok, _ := path.Match(prefix, p); ok {
			return true
		}
		dirs := strings.Count(prefix, "/")
		parts := strings.Split(p, "/")
		if len(parts) <= dirs+1 {
			return false
		}
		ok, _ := path.Match(prefix, strings.Join(parts[:dirs+1], "/"))
		return ok
	}
	ok, _ := path.Match(glob, p)
	return ok
}

// ancestor reports whether p is a directory on the way to what glob
// names: its elements match glob's first ones.
func ancestor(glob, p string) bool {
	g, q := strings.Split(glob, "/"), strings.Split(strings.TrimSuffix(p, "/"), "/")
	if len(q) >= len(g) {
		return false
	}
	for i, e := range q {
		if g[i] == "**" {
			return true
		}
		if ok, _ := path.Match(g[i], e); !ok {
			return false
		}
	}
	return true
}

// buildGenerator builds the generator's own program as the packages do.
func buildGenerator(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "rke2-proxy-backend-generator")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/rke2-proxy-backend-generator")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// syscalls strace prints with the path first: (dirfd, "path", ...); with
// -y a dirfd comes with the path it names, fd<path>, which a relative
// path (readlinkat beside an open directory, openat2 in the root) is
// joined to.
var traced = regexp.MustCompile(`^\d+\s+(\w+)\((?:AT_FDCWD|\d+(?:<((?:[^>\\]|\\.)*)>)?), "((?:[^"\\]|\\.)*)"(.*)$`)

// trace lays out the case's root, runs the generator on it under strace and
// returns what it touched as host paths ($GENERATOR for its output).
func trace(t *testing.T, bin, archive string) []access {
	t.Helper()
	root, out := t.TempDir(), t.TempDir()
	layOut(t, archive, root)
	dirs := []string{filepath.Join(out, "normal"), filepath.Join(out, "early"), filepath.Join(out, "late")}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	log := filepath.Join(out, "strace")
	cmd := exec.Command("strace", append([]string{"-f", "-qq", "-y", "-e", "trace=%file", "-e", "signal=none", "-o", log, bin}, dirs...)...)
	cmd.Env = append(os.Environ(), "RKE2_PROXY_BACKEND_ROOT="+root, "SYSTEMD_IN_INITRD=")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: strace %s: %v\n%s", archive, bin, err, b)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var got []access
	for _, line := range strings.Split(string(data), "\n") {
		m := traced.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		syscall, dir, rest := m[1], m[2], m[4]
		p, err := strconv.Unquote(`"` + m[3] + `"`)
		if err != nil || p == "" || syscall == "execve" {
			continue
		}
		// RESOLVE_IN_ROOT resolves even an absolute path in its dirfd.
		if dir != "" && (!filepath.IsAbs(p) || strings.Contains(rest, "RESOLVE_IN_ROOT")) {
			p = filepath.Join(dir, p)
		}
		switch {
		case p == root || strings.HasPrefix(p, root+"/"):
			p = "/" + strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		case p == dirs[0] || strings.HasPrefix(p, dirs[0]+"/"):
			p = "$GENERATOR" + strings.TrimPrefix(p, dirs[0])
		case !filepath.IsAbs(p):
			t.Fatalf("%s: a relative path in %q", archive, line)
		}
		kind := "read"
		switch syscall {
		case "mkdirat", "mkdir", "renameat", "renameat2", "rename", "unlinkat", "unlink", "rmdir", "symlinkat", "linkat", "fchmodat", "fchownat":
			kind = "write"
		case "openat", "openat2", "open":
			if strings.Contains(rest, "O_WRONLY") || strings.Contains(rest, "O_RDWR") || strings.Contains(rest, "O_CREAT") {
				kind = "write"
			}
		}
		got = append(got, access{kind, p})
	}
	if len(got) == 0 {
		t.Fatalf("%s: strace recorded nothing the generator touched", archive)
	}
	return got
}

// layOut writes a golden root archive (the generator tests' rootArchive:
// "path -> target" links, "path/" empty directories, "path (0755)" modes)
// under dir.
func layOut(t *testing.T, archive, dir string) {
	t.Helper()
	ar, err := txtar.ParseFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	mode := regexp.MustCompile(` \((0[0-7]+)\)$`)
	for _, f := range ar.Files {
		name, perm := f.Name, os.FileMode(0o644)
		if m := mode.FindStringSubmatch(name); m != nil {
			v, _ := strconv.ParseUint(m[1], 8, 32)
			name, perm = strings.TrimSuffix(name, m[0]), os.FileMode(v)
		}
		link, target, isLink := strings.Cut(name, " -> ")
		p := filepath.Join(dir, strings.TrimSuffix(link, "/"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case isLink:
			err = os.Symlink(target, p)
		case strings.HasSuffix(name, "/"):
			err = os.MkdirAll(p, 0o755)
		default:
			err = os.WriteFile(p, f.Data, perm)
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", archive, f.Name, err)
		}
	}
}
