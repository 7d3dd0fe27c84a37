package generator_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/faultinject"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// TestGeneratorUnderFaults runs the generator (this test binary under the
// generator's name) on a host with both RKE2 units, and fails or kills it
// at every write, sync, rename, ... it makes in its output directory, one
// at a time (the calls listed by a clean run: a write added later is
// covered without editing this test). After each run:
//   - it exited 0 unless killed (a generator never fails the boot);
//   - every unit file systemd would load there is whole, byte for byte
//     the clean run's (issue 31 item 12: a kill mid-write left an empty
//     rke2-server drop-in, and RKE2 started without apply);
//   - a failed run left no file systemd loads, and said so, never
//     claiming what it wrote;
//   - anything else left is the atomic writer's temp file, a dot-file,
//     which systemd does not load (and systemd empties the directory
//     before the next run).
func TestGeneratorUnderFaults(t *testing.T) {
	if !faultinject.Supported {
		testhost.Unmet(t, "the fault-injection tracer runs on linux/amd64 only")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gen := filepath.Join(t.TempDir(), cli.GeneratorName)
	if err := os.Symlink(self, gen); err != nil {
		t.Fatal(err)
	}
	root := testhost.New(t).RHEL9().RKE2Unit("rpm", "server").RKE2Unit("rpm", "agent").Dir()
	out := t.TempDir()
	run := func(fault *faultinject.Fault) (*faultinject.Result, string) {
		t.Helper()
		normal, err := os.MkdirTemp(out, "normal-")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(gen, normal, normal+".early", normal+".late")
		cmd.Env = []string{"RKE2_PROXY_BACKEND_ROOT=" + root, "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
		res, err := faultinject.Trace(cmd, []string{normal}, fault, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return res, normal
	}
	clean, cleanDir := run(nil)
	want := loaded(t, cleanDir)
	if clean.Exit != 0 || len(want) < 3 || !strings.Contains(clean.Stderr, "kube-proxy backend") {
		t.Fatalf("clean run: %d unit files %v\n%s", len(want), want, clean)
	}
	faults := faultinject.Faults(clean.Calls, os.Getenv("FAULTS_ALL") == "1")
	t.Logf("%d calls in the output directory, %d faults", len(clean.Calls), len(faults))
	for _, f := range faults {
		res, dir := run(&f)
		if res.Injected == nil {
			t.Errorf("%s: never reached (the run made other calls than the clean one)\n%s", f, res)
			continue
		}
		got := loaded(t, dir)
		for name, data := range got {
			if want[name] != data {
				t.Errorf("%s (%s): %s is not the clean run's:\n%q\n%s", f, res.Injected, name, data, res)
			}
		}
		for _, name := range hidden(t, dir) {
			if !tempName.MatchString(filepath.Base(name)) {
				t.Errorf("%s (%s): left %s, no temp file of the atomic writer", f, res.Injected, name)
			}
		}
		if f.Kill {
			continue
		}
		if res.Exit != 0 || len(got) != 0 || !strings.Contains(res.Stderr, "wrote nothing") || strings.Contains(res.Stderr, "kube-proxy backend") {
			t.Errorf("%s (%s): want exit 0, nothing loadable left and the failure said; left %v\n%s", f, res.Injected, keys(got), res)
		}
	}
}

// loaded is every file systemd would load from a generator directory:
// unit files and drop-ins, no dot-files (systemd skips hidden files).
func loaded(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// tempName is hostfs.WriteFileAtomic's temp file for a file NAME.
var tempName = regexp.MustCompile(`^\..+\.tmp-[0-9]+$`)

// hidden is every dot-file in dir, which loaded skips.
func hidden(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), ".") {
			names = append(names, p)
		}
		return err
	})
	return names
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
