package hostfs

import (
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// pathsFile declares every host path and helper binary the program uses.
const pathsFile = "paths.go"

// relativePaths are the names in paths.go that hold a path relative to a
// directory another name gives (K3sAuxDir is under k3s's data dir).
var relativePaths = []string{"K3sAuxDir"}

// pathFuncs are paths.go's exported functions that return []string,
// called with a usable kernel release (callers check it first): each
// returns host paths.
var pathFuncs = map[string]func(string) []string{
	"KernelConfigFiles": KernelConfigFiles,
	"KernelImageFiles":  KernelImageFiles,
}

// Every host path must be absolute and clean: Root.Path cleans what it is
// given, so "/run//x" would still work but be printed differently in
// messages and golden files than where it is actually written. The names
// are read from paths.go (go/parser, go/types): every exported string
// constant or var, every element of an exported []string, and what every
// exported function returns, so a new one is checked without editing this
// test. A value with no slash is a program looked up in PATH or a name
// joined under a directory: one clean path element.
func TestHostPathsAreAbsoluteAndClean(t *testing.T) {
	values, funcs := pathsDeclared(t)
	// The reader reads what the compiler does: a var, a constant built
	// from another and a slice's element.
	for name, want := range map[string]string{"Binary": Binary, "PlanFile": PlanFile, "IptablesCommands[2]": IptablesCommands[2]} {
		if values[name] != want {
			t.Fatalf("read %s = %q from %s; the package has %q", name, values[name], pathsFile, want)
		}
	}
	for name, v := range values {
		switch {
		case slices.Contains(relativePaths, strings.SplitN(name, "[", 2)[0]):
			if path.IsAbs(v) || path.Clean(v) != v {
				t.Errorf("%s = %q is not a relative clean path", name, v)
			}
		case strings.Contains(v, "/"):
			if !path.IsAbs(v) || path.Clean(v) != v {
				t.Errorf("%s = %q is not an absolute clean path", name, v)
			}
		case v == "" || v == "." || v == "..":
			t.Errorf("%s = %q is neither a path nor a name", name, v)
		}
	}
	for _, name := range relativePaths {
		if _, ok := values[name]; !ok {
			t.Errorf("relativePaths names %s, which %s no longer declares", name, pathsFile)
		}
	}
	for _, name := range funcs {
		f, ok := pathFuncs[name]
		if !ok {
			t.Errorf("%s declares func %s: add it to pathFuncs so its paths are checked", pathsFile, name)
			continue
		}
		for _, p := range f("6.1.0-18-amd64") {
			if !path.IsAbs(p) || path.Clean(p) != p {
				t.Errorf("%s(\"6.1.0-18-amd64\") gives %q, not an absolute clean path", name, p)
			}
		}
	}
}

// pathsDeclared type-checks paths.go and returns the value of every
// exported string constant or var (NAME) and of every element of an
// exported []string var (NAME[i]), and the names of its exported
// functions that return a []string. A string var must be initialised with a constant: -X sets
// nothing else.
func pathsDeclared(t *testing.T) (map[string]string, []string) {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, pathsFile, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.Default()}
	if _, err := conf.Check("hostfs", fset, []*ast.File{file}, info); err != nil {
		t.Fatalf("type-checking %s: %v", pathsFile, err)
	}
	isString := func(typ types.Type) bool {
		b, ok := typ.Underlying().(*types.Basic)
		return ok && b.Info()&types.IsString != 0
	}
	stringOf := func(name string, e ast.Expr) string {
		tv := info.Types[e]
		if tv.Value == nil || tv.Value.Kind() != constant.String {
			t.Fatalf("%s: %s is not initialised with a string constant", fset.Position(e.Pos()), name)
		}
		return constant.StringVal(tv.Value)
	}
	stringSlice := types.NewSlice(types.Typ[types.String])
	values := map[string]string{}
	var funcs []string
	for _, decl := range file.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if sig := info.Defs[d.Name].Type().(*types.Signature); d.Name.IsExported() && d.Recv == nil &&
				sig.Results().Len() == 1 && types.Identical(sig.Results().At(0).Type(), stringSlice) {
				funcs = append(funcs, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				vs, ok := spec.(*ast.ValueSpec)
				if !ok {
					continue
				}
				for i, id := range vs.Names {
					obj := info.Defs[id]
					if !id.IsExported() || obj == nil {
						continue
					}
					switch typ := obj.Type(); {
					case isString(typ):
						if c, ok := obj.(*types.Const); ok {
							values[id.Name] = constant.StringVal(c.Val())
						} else {
							values[id.Name] = stringOf(id.Name, vs.Values[i])
						}
					case types.Identical(typ, stringSlice):
						lit, ok := vs.Values[i].(*ast.CompositeLit)
						if !ok {
							t.Fatalf("%s: %s is not a []string literal", fset.Position(id.Pos()), id.Name)
						}
						for j, e := range lit.Elts {
							name := id.Name + "[" + strconv.Itoa(j) + "]"
							values[name] = stringOf(name, e)
						}
					}
				}
			}
		}
	}
	sort.Strings(funcs)
	return values, funcs
}

// The save/restore tools are looked up in PATH unless a packager links in
// an absolute path; either way they name one flavour, never the plain
// iptables-save that follows the host's alternative.
func TestToolsNameTheirFlavour(t *testing.T) {
	for tool, flavour := range map[string]string{
		IptablesLegacySave: "legacy", Ip6tablesLegacySave: "legacy",
		IptablesLegacyRestore: "legacy", Ip6tablesLegacyRestore: "legacy",
		IptablesNFTSave: "nft", Ip6tablesNFTSave: "nft",
		IptablesNFTRestore: "nft", Ip6tablesNFTRestore: "nft",
	} {
		if !strings.Contains(path.Base(tool), "-"+flavour+"-") {
			t.Errorf("%q does not name the %s flavour", tool, flavour)
		}
	}
}

func TestKernelConfigFilesWithoutRelease(t *testing.T) {
	got := KernelConfigFiles("")
	want := []string{ProcConfigGz, "/usr/src/linux/.config"}
	if !slices.Equal(got, want) {
		t.Errorf("KernelConfigFiles(\"\") = %q, want %q", got, want)
	}
	for _, p := range got {
		if !slices.Contains(KernelConfigFiles("6.1.0"), p) {
			t.Errorf("%s is not among the candidates for a known release", p)
		}
	}
}
