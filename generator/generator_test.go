package generator

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

func fixedDecider(f facts.Facts, d decide.Decision, err error) Decider {
	return func() (hostplan.Plan, error) {
		return hostplan.Plan{Facts: f, Decision: d}, err
	}
}

var serverFacts = facts.Facts{RKE2: facts.RKE2{Units: []facts.RKE2Unit{{Name: "rke2-server.service", Role: "server"}}}}

// runGen runs the generator into fresh dirs and returns the outcome, the
// files written (relative path -> content) and the log.
func runGen(t *testing.T, root hostfs.Root, env map[string]string, dec Decider) (Outcome, map[string]string, string) {
	t.Helper()
	dirs := testhost.GeneratorDirs(t)
	var log bytes.Buffer
	called := false
	out, _ := Run(Options{
		Root: root, Dirs: dirs, Environ: environ(env), Log: NewLogger(&log),
		Decide: func() (hostplan.Plan, error) { called = true; return dec() },
	})
	if out == Initrd && called {
		t.Error("the generator probed the host in the initrd")
	}
	files := map[string]string{}
	for i, d := range dirs {
		err := filepath.Walk(d, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			if i > 0 {
				t.Errorf("wrote %s outside the normal directory", p)
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(d, p)
			files[rel] = string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out, files, log.String()
}

// serverDropIn is the rke2-server drop-in the generator wrote into the
// normal directory dir.
func serverDropIn(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "rke2-server.service.d", "50-rke2-proxy-backend.conf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestGeneratorWritesDropIns(t *testing.T) {
	d := decide.Decision{Backend: backend.IptablesLegacy, Source: "auto", Reasons: []string{"A legacy trigger matched."}}
	out, files, log := runGen(t, hostfs.New(t.TempDir()), nil, fixedDecider(serverFacts, d, nil))
	if out != Wrote || len(files) != 2 {
		t.Fatalf("outcome %s, files %v\n%s", out, files, log)
	}
	if !strings.Contains(files["rke2-server.service.d/50-rke2-proxy-backend.conf"], "apply --backend=iptables-legacy") {
		t.Errorf("server drop-in: %q", files["rke2-server.service.d/50-rke2-proxy-backend.conf"])
	}
	want := Name + ": info: kube-proxy backend iptables-legacy (source auto) for rke2-server.service: A legacy trigger matched.\n"
	if log != want {
		t.Errorf("log %q, want %q", log, want)
	}
}

func TestGeneratorDoesNothingInInitrd(t *testing.T) {
	root := t.TempDir()
	for name, c := range map[string]struct {
		env  map[string]string
		file bool
	}{
		"env":                   {env: map[string]string{"SYSTEMD_IN_INITRD": "1"}},
		"initrd-release":        {file: true},
		"env says not, no file": {env: map[string]string{"SYSTEMD_IN_INITRD": "0"}},
	} {
		dir := filepath.Join(root, name)
		if c.file {
			if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "etc/initrd-release"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		d := decide.Decision{Backend: backend.IptablesNFT}
		out, files, log := runGen(t, hostfs.New(dir), c.env, fixedDecider(serverFacts, d, nil))
		wantInitrd := name != "env says not, no file"
		if (out == Initrd) != wantInitrd || (wantInitrd && (len(files) != 0 || !strings.Contains(log, "initrd"))) {
			t.Errorf("%s: outcome %s, %d files, log %q", name, out, len(files), log)
		}
	}
}

func TestGeneratorNeverFailsTheBoot(t *testing.T) {
	for name, dec := range map[string]Decider{
		"config error": fixedDecider(facts.Facts{}, decide.Decision{}, errors.New(`/etc/rke2-proxy-backend/config.yaml: key "backend": value "modern" is not valid`)),
		"bad unit name": fixedDecider(facts.Facts{RKE2: facts.RKE2{Units: []facts.RKE2Unit{{Name: "../x.service"}}}},
			decide.Decision{Backend: backend.IptablesNFT}, nil),
		"no backend": fixedDecider(serverFacts, decide.Decision{}, nil),
	} {
		out, files, log := runGen(t, hostfs.New(t.TempDir()), nil, dec)
		want := Failed
		if name == "config error" {
			want = BrokenConfig // with no RKE2 unit, nothing to wire
		}
		if out != want || len(files) != 0 || strings.Count(log, "\n") != 1 || !strings.Contains(log, ": error: ") {
			t.Errorf("%s: outcome %s, files %v, log %q; want one error line and nothing written", name, out, files, log)
		}
	}
}

// A broken operator config must not leave RKE2 to start silently on the
// drop-in an earlier boot left: the RKE2 units still run apply (without a
// backend), which fails on the same error and so stops RKE2's start.
func TestGeneratorWiresApplyWhenTheConfigIsBroken(t *testing.T) {
	cfgErr := errors.New(`/etc/rke2-proxy-backend/config.yaml: backend: "modern" is not a backend`)
	out, files, log := runGen(t, hostfs.New(t.TempDir()), nil, fixedDecider(serverFacts, decide.Decision{}, cfgErr))
	if out != BrokenConfig || strings.Count(log, "\n") != 1 || !strings.Contains(log, "error: "+cfgErr.Error()) ||
		!strings.Contains(log, "exits 2 on this error, so RKE2 does not start until it is fixed") {
		t.Errorf("outcome %s, log %q", out, log)
	}
	var applyLines []string
	for name, data := range files {
		if strings.HasPrefix(name, units.VerifyUnit) {
			t.Errorf("verify is wired although nothing was planned: %s", name)
		}
		for _, line := range strings.Split(data, "\n") {
			if strings.HasPrefix(line, "ExecStartPre=") {
				applyLines = append(applyLines, line)
			}
		}
	}
	if len(applyLines) != 1 || applyLines[0] != "ExecStartPre="+hostfs.Binary+" apply" {
		t.Errorf("ExecStartPre lines %q, want apply without a backend", applyLines)
	}
}

func TestGeneratorDisabledAndNoRKE2(t *testing.T) {
	out, files, log := runGen(t, hostfs.New(t.TempDir()), nil, fixedDecider(serverFacts, decide.Decision{Disabled: true}, nil))
	if out != Disabled || len(files) != 0 || strings.Count(log, "\n") != 1 || !strings.Contains(log, "info: disabled") {
		t.Errorf("disabled: outcome %s, files %v, log %q", out, files, log)
	}
	out, files, log = runGen(t, hostfs.New(t.TempDir()), nil, fixedDecider(facts.Facts{}, decide.Decision{Backend: backend.IptablesNFT}, nil))
	if out != NoRKE2 || len(files) != 0 || !strings.Contains(log, "no rke2-server or rke2-agent unit") {
		t.Errorf("no RKE2: outcome %s, files %v, log %q", out, files, log)
	}
}

// A write that fails half way leaves nothing behind.
func TestGeneratorWriteFailureLeavesNothing(t *testing.T) {
	base := t.TempDir()
	normal := filepath.Join(base, "normal")
	// rke2-server.service.d is a file: the second drop-in cannot be written.
	if err := os.MkdirAll(normal, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(normal, "rke2-server.service.d"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	out, err := Run(Options{Root: hostfs.New(base), Dirs: []string{normal}, Log: NewLogger(&log),
		Decide: fixedDecider(serverFacts, decide.Decision{Backend: backend.NFTables}, nil)})
	if out != Failed || err == nil {
		t.Fatalf("outcome %s, err %v", out, err)
	}
	entries, _ := os.ReadDir(normal)
	if len(entries) != 1 {
		t.Errorf("normal dir holds %d entries after a failed run, want only the obstacle", len(entries))
	}
}

func TestKmsgFormat(t *testing.T) {
	var buf bytes.Buffer
	l := &Logger{w: &buf, kmsg: true}
	l.Warn("line one\nline two %s", strings.Repeat("x", 2000))
	got := buf.String()
	if !strings.HasPrefix(got, "<4>"+Name+": line one line two xxx") || strings.Count(got, "\n") != 1 || len(got) > 1024 {
		t.Errorf("kmsg record %q (len %d): want one <4> record under 1 KiB", got[:60], len(got))
	}
}

// environ is env as os.Environ lists it.
func environ(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}
