// Package packagemap keeps docs/DESIGN-notes.md's package map drawn from
// `go list`, not from memory: each package of the product sits on the
// floor above the highest one it imports, so a new import that runs up a
// floor moves packages in the drawing and fails this test until the map
// (a reviewed change, UPDATE_GOLDEN=1) is redrawn. The same graph is held
// to the rules written beside the map (rules_test.go).
package packagemap

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/golden"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/repo"
)

const (
	module = "github.com/rke2-proxy-backend/rke2-proxy-backend/"
	begin  = "<!-- package map: drawn by internal/testkit/packagemap from go list; UPDATE_GOLDEN=1 redraws it -->\n"
	end    = "<!-- end of package map -->\n"
)

// TestPackageMapIsCurrent draws the floors of every package the shipped
// binaries link and compares them with the map in docs/DESIGN-notes.md.
func TestPackageMapIsCurrent(t *testing.T) {
	root := repo.Root(t)
	imports := shipped(graph(t))
	drawing := draw(floors(imports), imports)

	doc := filepath.Join(root, "docs", "DESIGN-notes.md")
	text, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(text, []byte(begin)), bytes.Index(text, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s: no package map between %q and %q: add the two markers where the map belongs", doc, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	if golden.Update(t) {
		golden.File(t, doc, append(append(append([]byte{}, text[:i+len(begin)]...), drawing...), text[j:]...))
		return
	}
	if inDoc := string(text[i+len(begin) : j]); inDoc != drawing {
		t.Errorf("%s: the package map is not what go list draws: review the change and run UPDATE_GOLDEN=1 go test ./internal/testkit/packagemap\n--- in the doc\n%s\n--- from go list\n%s", doc, inDoc, drawing)
	}
}

// listed is `go list -deps` of the whole module, once per test binary:
// both tests read it.
var listed = sync.OnceValues(func() ([]byte, error) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}|{{join .Imports ","}}`, module+"...").Output()
	if ee, ok := err.(*exec.ExitError); ok {
		err = fmt.Errorf("%w: %s", err, ee.Stderr)
	}
	return out, err
})

// graph is what go list says each package of the module imports (test files
// excluded: the map is of what ships). Module packages and their module
// imports are named without the module prefix; other modules' packages
// keep their full path (the first element has a dot); the standard library
// is left out.
func graph(t *testing.T) map[string][]string {
	t.Helper()
	out, err := listed()
	if err != nil {
		t.Fatalf("go list -deps %s...: %v", module, err)
	}
	imports := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, deps, _ := strings.Cut(line, "|")
		if !strings.HasPrefix(path, module) {
			continue
		}
		own := []string{}
		for _, d := range strings.Split(deps, ",") {
			if first, _, _ := strings.Cut(d, "/"); strings.HasPrefix(d, module) {
				own = append(own, strings.TrimPrefix(d, module))
			} else if strings.Contains(first, ".") {
				own = append(own, d)
			}
		}
		imports[strings.TrimPrefix(path, module)] = own
	}
	return imports
}

// shipped is the part of g the binaries under cmd/ link, module packages
// only: the map of what ships.
func shipped(g map[string][]string) map[string][]string {
	out := map[string][]string{}
	var visit func(p string)
	visit = func(p string) {
		if _, done := out[p]; done {
			return
		}
		out[p] = nil
		for _, d := range g[p] {
			if _, ok := g[d]; ok {
				out[p] = append(out[p], d)
				visit(d)
			}
		}
	}
	for p := range g {
		if strings.HasPrefix(p, "cmd/") {
			visit(p)
		}
	}
	return out
}

// floors puts each package one floor above the highest it imports; a
// package importing nothing of the module is on floor 0.
func floors(imports map[string][]string) map[string]int {
	floor := map[string]int{}
	var place func(p string) int
	place = func(p string) int {
		if f, ok := floor[p]; ok {
			return f
		}
		f := 0
		for _, d := range imports[p] {
			if g := place(d) + 1; g > f {
				f = g
			}
		}
		floor[p] = f
		return f
	}
	for p := range imports {
		place(p)
	}
	return floor
}

// draw renders the floors top down as a Markdown table: the floor, its
// packages, and what each imports from the floor right below it (the
// import that holds it up there).
func draw(floor map[string]int, imports map[string][]string) string {
	top := 0
	byFloor := map[int][]string{}
	for p, f := range floor {
		byFloor[f] = append(byFloor[f], p)
		if f > top {
			top = f
		}
	}
	var b strings.Builder
	b.WriteString("\n| floor | packages (each imports something on the floor below; `a ← b` names that import) |\n|---|---|\n")
	for f := top; f >= 0; f-- {
		ps := byFloor[f]
		sort.Strings(ps)
		cells := make([]string, 0, len(ps))
		for _, p := range ps {
			var holds []string
			for _, d := range imports[p] {
				if floor[d] == f-1 {
					holds = append(holds, "`"+d+"`")
				}
			}
			sort.Strings(holds)
			cell := "`" + p + "`"
			if len(holds) > 0 {
				cell += " ← " + holds[0]
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(&b, "| %d | %s |\n", f, strings.Join(cells, ", "))
	}
	b.WriteString("\n")
	return b.String()
}
