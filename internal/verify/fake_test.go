package verify

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// newFake is the Fake with the read options production's reader has
// (NewReader's), so a unit test sees the shapes verify really reads: the
// per-Service chains as counted, undecoded placeholders, not whole rules.
func newFake(t testing.TB, rulesets ...*rules.Ruleset) *netfilter.Fake {
	t.Helper()
	f := netfilter.NewFake(rulesets...)
	f.ReadOptions = NewReader(hostfs.New(t.TempDir())).ReadOptions
	return f
}

// The helper really carries production's options: a Fake built without
// them decodes per-Service chains, which the system reader never does.
func TestNewFakeReadsLikeProduction(t *testing.T) {
	if got := newFake(t).ReadOptions; !got.Shallow || got.SkipChain == nil || !got.SkipChain("KUBE-SVC-X") || got.SkipChain("KUBE-SERVICES") {
		t.Fatalf("newFake's read options = %+v, want NewReader's (shallow, skipping per-Service chains)", got)
	}
}

// No test of this package builds a Fake past newFake: one built bare reads
// every rule whole, shapes production never sees, so a test could pass on
// rules verify does not read.
func TestEveryFakeHasProductionOptions(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files found (%v)", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "newFake" && fn.Recv == nil {
				continue
			}
			ast.Inspect(d, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "netfilter" && sel.Sel.Name == "NewFake" {
					t.Errorf("%s: netfilter.NewFake without production's read options; use newFake or healthyFake", fset.Position(sel.Pos()))
				}
				return true
			})
		}
	}
}

// healthyFake is newFake holding b's skeleton (no Services, version
// unknown): rules verify passes, for the tests about what verify reads
// beside them (kube-proxy's /proxyMode and /metrics).
func healthyFake(t *testing.T, b backend.Backend) *netfilter.Fake {
	t.Helper()
	return newFake(t, skeleton(t, b, rke2.KubeVersion{}, 0))
}
