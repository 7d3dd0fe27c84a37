package generator_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// unitDirs are where RKE2's install methods put units (DOMAIN.md section 5).
var unitDirs = []string{"/etc/systemd/system", "/usr/local/lib/systemd/system", "/usr/lib/systemd/system"}

// systemdAnalyze finds systemd-analyze and the directory of systemd's own
// units (the targets the RKE2 units refer to), or skips the test.
func systemdAnalyze(t *testing.T) (analyze, sysUnits string) {
	t.Helper()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testhost.Unmet(t, "systemd-analyze not installed (CI installs systemd): %v", err)
	}
	for _, d := range []string{"/usr/lib/systemd/system", "/lib/systemd/system"} {
		if _, err := os.Stat(filepath.Join(d, "multi-user.target")); err == nil {
			return analyze, d
		}
	}
	testhost.Unmet(t, "no systemd unit directory (multi-user.target) on this machine")
	return "", ""
}

// TestSystemdAnalyzeVerify checks every generated drop-in, the shipped
// units and RKE2's real unit files (both the ExecCondition and the older
// Conflicts/nm-cloud-setup form, in every layout) with systemd's own parser.
// systemd only warns about unknown keys or bad values, so any output fails.
func TestSystemdAnalyzeVerify(t *testing.T) {
	analyze, sysUnits := systemdAnalyze(t)
	checked := 0
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			h := c.host(t)
			normal, _ := runGenerator(t, c, h)
			generated := golden.ReadTree(t, normal)
			if len(generated) == 0 {
				return
			}
			checked++
			root := t.TempDir()
			copyTree(t, sysUnits, filepath.Join(root, "usr/lib/systemd/system"))
			var names []string
			for _, dir := range unitDirs {
				entries, _ := os.ReadDir(filepath.Join(h.Dir(), dir))
				for _, e := range entries {
					if strings.HasSuffix(e.Name(), ".service") {
						copyFile(t, filepath.Join(h.Dir(), dir, e.Name()), filepath.Join(root, dir, e.Name()))
						names = append(names, e.Name())
					}
				}
			}
			for name, data := range units.Shipped() {
				writeFile(t, filepath.Join(root, hostfs.ShippedUnitDir, name), data, 0o644)
				names = append(names, name)
			}
			for rel, data := range generated {
				writeFile(t, filepath.Join(root, "run/systemd/generator", rel), []byte(data), 0o644)
			}
			if out, err := analyzeRoot(t, analyze, root, names); err != nil || out != "" {
				t.Errorf("systemd-analyze verify %s: %v\n%s", strings.Join(names, " "), err, out)
			}
		})
	}
	if checked == 0 {
		t.Fatal("no golden case generated anything to verify")
	}
}

// analyzeRoot runs systemd-analyze verify on names inside root, with the
// generator output dir first in the search path, and returns its output.
func analyzeRoot(t *testing.T, analyze, root string, names []string) (string, error) {
	t.Helper()
	stubExecutables(t, root)
	sort.Strings(names)
	cmd := exec.Command(analyze, append([]string{"verify", "--root=" + root, "--man=no"}, names...)...)
	// The trailing ":" keeps the built-in search path after ours.
	cmd.Env = append(os.Environ(), "SYSTEMD_UNIT_PATH=/run/systemd/generator:", "SYSTEMD_LOG_COLOR=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// The check above can fail: a drop-in with an unknown key in the generator
// dir makes systemd-analyze print a warning (while still exiting 0).
func TestSystemdAnalyzeSeesGeneratorDropIns(t *testing.T) {
	analyze, sysUnits := systemdAnalyze(t)
	root := t.TempDir()
	copyTree(t, sysUnits, filepath.Join(root, "usr/lib/systemd/system"))
	for name, data := range units.Shipped() {
		writeFile(t, filepath.Join(root, hostfs.ShippedUnitDir, name), data, 0o644)
	}
	writeFile(t, filepath.Join(root, "run/systemd/generator", units.VerifyUnit+".d", hostfs.UnitDropInName),
		[]byte("[Service]\nExecStartPre=/usr/bin/x %q\nBogusKey=1\n"), 0o644)
	out, _ := analyzeRoot(t, analyze, root, []string{units.VerifyUnit})
	if !strings.Contains(out, "BogusKey") {
		t.Errorf("systemd-analyze did not report the bad drop-in; output:\n%s", out)
	}
}

// stubExecutables creates every program an Exec*= line in root's units
// names, so verify's "is executable" check passes for what exists on a real
// node and fails only for what is wrong in the units.
func stubExecutables(t *testing.T, root string) {
	t.Helper()
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !(strings.HasSuffix(p, ".service") || strings.HasSuffix(p, ".conf")) {
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			return nil // an enablement link (host-absolute): its target is walked itself
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		opts, err := unit.Deserialize(f)
		if err != nil {
			t.Errorf("%s does not parse: %v", p, err)
			return nil
		}
		for _, o := range opts {
			if !strings.HasPrefix(o.Name, "Exec") || o.Value == "" {
				continue
			}
			prog := strings.TrimLeft(strings.Fields(o.Value)[0], "-@:+!")
			if strings.HasPrefix(prog, "/") {
				stub := filepath.Join(root, prog)
				if _, err := os.Stat(stub); os.IsNotExist(err) {
					writeFile(t, stub, []byte("#!/bin/sh\n"), 0o755)
				} else if err := os.Chmod(stub, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p string, data []byte, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, mode); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, data, 0o644)
}

// copyTree copies regular files and symlinks (systemd's unit dirs alias
// units with links).
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.Walk(from, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		switch {
		case info.IsDir():
			return os.MkdirAll(dst, 0o755)
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, data, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestMain lets the test binary stand in for the installed generator: run
// under the generator's name (a symlink), it is the real command line.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == cli.GeneratorName {
		os.Exit(cli.Main(os.Args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestSystemdRunsGenerator lets systemd's own generator runner call ours
// (systemd-analyze verify --generators=yes with SYSTEMD_GENERATOR_PATH), as
// PID 1 does at boot, and verifies the units it then loads.
func TestSystemdRunsGenerator(t *testing.T) {
	analyze, sysUnits := systemdAnalyze(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	genDir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(genDir, cli.GeneratorName)); err != nil {
		t.Fatal(err)
	}
	for _, c := range goldenCases() {
		if !strings.HasPrefix(c.name, "tarball_") && !strings.HasPrefix(c.name, "rpm_") && !strings.HasPrefix(c.name, "opt_") && !strings.HasPrefix(c.name, "k3s_") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			h := c.host(t)
			// The fixture root doubles as the analysis root: RKE2's units are
			// where the install put them, systemd's own next to them.
			copyTree(t, sysUnits, filepath.Join(h.Dir(), "usr/lib/systemd/system"))
			var names []string
			for _, dir := range unitDirs {
				entries, _ := os.ReadDir(filepath.Join(h.Dir(), dir))
				for _, e := range entries {
					if (strings.HasPrefix(e.Name(), "rke2-") || strings.HasPrefix(e.Name(), "k3s")) && strings.HasSuffix(e.Name(), ".service") {
						names = append(names, e.Name())
					}
				}
			}
			for name, data := range units.Shipped() {
				writeFile(t, filepath.Join(h.Dir(), hostfs.ShippedUnitDir, name), data, 0o644)
				names = append(names, name)
			}
			stubExecutables(t, h.Dir())
			sort.Strings(names)
			cmd := exec.Command(analyze, append([]string{"verify", "--root=" + h.Dir(), "--generators=yes", "--man=no"}, names...)...)
			cmd.Env = append(os.Environ(), "SYSTEMD_GENERATOR_PATH="+genDir, "RKE2_PROXY_BACKEND_ROOT="+h.Dir(),
				"SYSTEMD_LOG_COLOR=0", "SYSTEMD_LOG_LEVEL=debug")
			out, err := cmd.CombinedOutput()
			var loaded bool
			for _, line := range strings.Split(string(out), "\n") {
				if strings.Contains(line, "DropIn Path:") && (strings.Contains(line, "/generator/rke2-") || strings.Contains(line, "/generator/k3s")) && strings.HasSuffix(line, hostfs.UnitDropInName) {
					loaded = true
				}
			}
			if err != nil || !loaded {
				t.Fatalf("systemd-analyze --generators=yes: %v, our drop-in loaded: %v\n%s", err, loaded, out)
			}
			// Without debug output, only our generator's own info line may appear.
			cmd = exec.Command(analyze, append([]string{"verify", "--root=" + h.Dir(), "--generators=yes", "--man=no"}, names...)...)
			cmd.Env = append(os.Environ(), "SYSTEMD_GENERATOR_PATH="+genDir, "RKE2_PROXY_BACKEND_ROOT="+h.Dir(), "SYSTEMD_LOG_COLOR=0")
			out, err = cmd.CombinedOutput()
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if line != "" && !strings.HasPrefix(line, cli.GeneratorName+": info: kube-proxy backend ") {
					t.Errorf("systemd-analyze --generators=yes printed %q (exit %v)", line, err)
				}
			}
		})
	}
}
