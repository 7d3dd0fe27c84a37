package generator

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// module prefixes this module's packages in go list and inittrace.
const module = "github.com/rke2-proxy-backend/rke2-proxy-backend/"

// The generator's own program starts at every boot and daemon-reload, on
// hosts with neither RKE2 nor k3s too (issue 35: <= 0.4x getty there), so
// what runs before main is budgeted: the module's packages build no tables
// at init (a map literal, a regexp, an fmt call; build them on first use,
// or as a list the linker lays out), and the program links none of the
// standard library's heavier packages that only apply and verify need. The
// budget leaves room for a few sync.OnceValue closures, which is how a
// table is built on first use (about 40 bytes each).
func TestGeneratorStartup(t *testing.T) {
	const initBudget = 1024 // bytes all module packages may allocate at init
	bin := filepath.Join(t.TempDir(), "rke2-proxy-backend-generator")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "../cmd/rke2-proxy-backend-generator")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	run := exec.Command(bin, testhost.GeneratorDirs(t)...)
	run.Env = append(os.Environ(), "GODEBUG=inittrace=1", "RKE2_PROXY_BACKEND_ROOT="+t.TempDir())
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("the generator on a root with neither RKE2 nor k3s: %v\n%s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)
	total, seen := 0, 0
	var ours []string
	for _, m := range line.FindAllStringSubmatch(string(out), -1) {
		seen++
		if !strings.HasPrefix(m[1], module) {
			continue
		}
		bytes, _ := strconv.Atoi(m[2])
		total += bytes
		ours = append(ours, strings.TrimPrefix(m[1], module)+" "+m[2]+" bytes, "+m[3]+" allocs")
	}
	if seen == 0 {
		t.Fatalf("GODEBUG=inittrace=1 printed no init line:\n%s", out)
	}
	if total > initBudget {
		t.Errorf("the module's packages allocate %d bytes at the generator's start, over the budget of %d: build tables on first use or as lists the linker lays out\n%s",
			total, initBudget, strings.Join(ours, "\n"))
	}

	deps, err := exec.Command("go", "list", "-deps", "../cmd/rke2-proxy-backend-generator").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	linked := strings.Fields(string(deps))
	for _, heavy := range []string{"text/template", "net", "net/url", "net/netip", "net/http", "crypto/tls"} {
		if slices.Contains(linked, heavy) {
			t.Errorf("the generator links %s: its init and pages would be every boot's; keep it in the package that needs it (apply, verify)", heavy)
		}
	}
}
