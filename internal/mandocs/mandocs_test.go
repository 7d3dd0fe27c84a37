package mandocs

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

var testDate = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func writeDocs(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := Write(cli.NewRootCommand(io.Discard, io.Discard), dir, testDate); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return dir
}

func TestWriteDocs(t *testing.T) {
	a, b := writeDocs(t), writeDocs(t)
	for _, rel := range []string{
		"man1/rke2-proxy-backend.1",
		"man1/rke2-proxy-backend-version.1",
		"man1/rke2-proxy-backend-render-live.1",
		"man5/" + ConfigPage + ".5",
		"completions/" + BashCompletionFile,
		"completions/" + ZshCompletionFile,
		"completions/" + FishCompletionFile,
	} {
		x, err := os.ReadFile(filepath.Join(a, rel))
		if err != nil {
			t.Fatalf("expected %s: %v", rel, err)
		}
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same date: packages would not be reproducible", rel)
		}
	}
	top, _ := os.ReadFile(filepath.Join(a, "man1", "rke2-proxy-backend.1"))
	if !strings.HasPrefix(string(top), `.TH "RKE2\-PROXY\-BACKEND" "1" "2026\-01\-02" `) {
		t.Errorf("man page does not open with a .TH carrying the given date:\n%.200s", top)
	}
	if strings.Contains(string(top), "Auto generated") {
		t.Error("man page carries cobra's auto-generated tag with a build date")
	}
}

// manText renders a page the way a user reads it, through man(1) and groff
// with warnings on; a warning fails the test, as it would fail lintian.
func manText(t *testing.T, page string) string {
	t.Helper()
	if _, err := exec.LookPath("man"); err != nil {
		testhost.Unmet(t, "man is not installed (apt-get install man-db groff-base)")
	}
	cmd := exec.Command("man", "--warnings", "-E", "UTF-8", "-P", "cat", "-l", page)
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8", "MANWIDTH=200", "MAN_KEEP_FORMATTING=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("man -l %s: %v\n%s", page, err, stderr.String())
	}
	return string(out)
}

func TestManPagesRender(t *testing.T) {
	dir := writeDocs(t)
	pages, _ := filepath.Glob(filepath.Join(dir, "man*", "*.[15]"))
	if len(pages) < 10 {
		t.Fatalf("only %d man pages: %v", len(pages), pages)
	}
	rendered := map[string]string{}
	for _, p := range pages {
		text := manText(t, p)
		rendered[filepath.Base(p)] = text
		for _, section := range []string{"NAME", "DESCRIPTION", "ENVIRONMENT", "SEE ALSO"} {
			if !strings.Contains(text, "\n"+section+"\n") {
				t.Errorf("%s has no %s section", filepath.Base(p), section)
			}
		}
		if strings.HasSuffix(p, ".1") && !strings.Contains(text, "\nEXIT STATUS\n") {
			t.Errorf("%s has no EXIT STATUS section", filepath.Base(p))
		}
	}

	top := rendered["rke2-proxy-backend.1"]
	for _, want := range []string{
		"\nFILES\n",
		"       " + hostfs.ConfigFile + "\n",
		"       2      Usage or configuration error:",
		"       " + hostfs.EnvRoot + "\n",
		"rke2-proxy-backend-config(5)",
		"rke2-proxy-backend-render(1)",
	} {
		if !strings.Contains(top, want) {
			t.Errorf("rke2-proxy-backend(1) lacks %q:\n%s", want, top)
		}
	}

	apply := rendered["rke2-proxy-backend-apply.1"]
	if !strings.Contains(apply, "writes <RKE2 config>.d/60-proxy-backend.yaml") {
		t.Errorf("apply(1) lost the <RKE2 config> placeholder:\n%s", apply)
	}

	verify := rendered["rke2-proxy-backend-verify.1"]
	want := "       --wait duration\n              wait up to this long for kube-proxy's first sync (default: verify.wait from the config; 5m when the config does not set it)\n"
	if !strings.Contains(verify, want) {
		t.Errorf("verify(1) does not show --wait's real default; want\n%s\nin:\n%s", want, verify)
	}
	if !strings.Contains(verify, "\n       3      Cannot tell:") {
		t.Errorf("verify(1) does not document exit status 3 (cannot tell):\n%s", verify)
	}
	if strings.Contains(verify, "--wait=0s") || strings.Contains(verify, "default: 0s") {
		t.Errorf("verify(1) shows a 0s default:\n%s", verify)
	}
}

func TestConfigPage(t *testing.T) {
	text := manText(t, filepath.Join(writeDocs(t), "man5", ConfigPage+".5"))
	if !strings.Contains(text, "\nSYNOPSIS\n       "+hostfs.ConfigFile+"\n") {
		t.Errorf("the synopsis does not name %s:\n%s", hostfs.ConfigFile, text)
	}
	for _, k := range config.Keys() {
		term := "       " + k.Path + " (" + k.Type + ", default " + k.Default + ")\n"
		if !strings.Contains(text, term) {
			t.Errorf("no entry %q", term)
		}
		if !strings.Contains(text, "Environment: "+k.Env+".") {
			t.Errorf("%s: its variable %s is not named", k.Path, k.Env)
		}
	}
	for _, want := range []string{"verify.wait (duration, default 5m)", "\nOVERRIDES\n", "\nEXAMPLE\n", "\nFILES\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("config page lacks %q", want)
		}
	}
}

func TestConfigPageCoversEveryKey(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range config.Keys() {
		seen[k.Path] = true
		if keyText[k.Path] == "" {
			t.Errorf("config key %s has no text in keyText", k.Path)
		}
	}
	for p := range keyText {
		if !seen[p] {
			t.Errorf("keyText explains %s, which is not a config key", p)
		}
	}
}

// The page's example is a real config: it loads without error.
func TestConfigExampleLoads(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, hostfs.ConfigFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(configExample), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(hostfs.New(dir), hostfs.ConfigFile, nil, nil)
	if err != nil {
		t.Fatalf("the man page's example is refused: %v", err)
	}
	if c.OnFailure != config.OnFailureBlock || c.Verify.Wait != config.Duration(10*time.Minute) {
		t.Errorf("example loaded as %+v", c)
	}
}

func TestDocsDateFromSourceDateEpoch(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	d, err := DateFromEnv()
	if err != nil || d.Unix() != 1700000000 {
		t.Fatalf("DateFromEnv() = %v, %v; want 1700000000", d, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := DateFromEnv(); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Fatalf("bad SOURCE_DATE_EPOCH: got %v, want an error naming it", err)
	}
}
