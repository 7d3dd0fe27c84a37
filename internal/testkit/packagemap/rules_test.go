package packagemap

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/repo"
)

const (
	doc        = "docs/DESIGN-notes.md"
	rulesBegin = "<!-- package rules: read by internal/testkit/packagemap -->\n"
	rulesEnd   = "<!-- end of package rules -->\n"
)

// rule is one line of the rules block: no package matching one of from may
// import (or, with link, depend on at all) a package matching one of to,
// unless it matches one of except. A known rule is broken today on
// purpose (the issue that mends it names it); it must stay broken until
// someone drops the "known" from the doc.
type rule struct {
	line             int
	text             string
	known            bool
	from, to, except []string
	link             bool
}

var (
	ruleLine  = regexp.MustCompile(`^(known [^:]+: )?(\S+(?:, \S+)*) must not (import|link) (\S+(?:, \S+)*?)(?: except (\S+(?:, \S+)*))? -- \S.*$`)
	layerLine = regexp.MustCompile(`^layers: (.+?) -- \S.*$`)
)

// TestPackageRules checks every arrow go list draws against the rules
// written in docs/DESIGN-notes.md, and fails naming the arrow and the
// rule it breaks.
func TestPackageRules(t *testing.T) {
	rules := readRules(t, filepath.Join(repo.Root(t), doc))
	all := graph(t)
	ships := shipped(all)
	for _, r := range rules {
		if bad := r.unknownNames(ships, all); len(bad) > 0 {
			t.Errorf("%s line %d: %s names no package the module has: %s (a rule that cannot break guards nothing; fix the name)", doc, r.line, strings.Join(bad, ", "), r.text)
			continue
		}
		broken := r.breaches(all, ships)
		switch {
		case r.known && len(broken) == 0:
			t.Errorf("%s line %d: the known exception holds now: drop its \"known ...:\" so it guards from here on: %s", doc, r.line, r.text)
		case r.known:
			t.Logf("known exception, still broken: %s", strings.Join(broken, "; "))
		default:
			for _, b := range broken {
				t.Errorf("%s breaks the rule of %s line %d: %s", b, doc, r.line, r.text)
			}
		}
	}
}

// readRules parses the block between rulesBegin and rulesEnd: rule lines,
// layer lines, and (ignored) blank lines, code fences and # comments.
func readRules(t *testing.T, file string) []rule {
	t.Helper()
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(text, []byte(rulesBegin)), bytes.Index(text, []byte(rulesEnd))
	if i < 0 || j < i {
		t.Fatalf("%s: no rules between %q and %q", doc, strings.TrimSpace(rulesBegin), strings.TrimSpace(rulesEnd))
	}
	first := bytes.Count(text[:i+len(rulesBegin)], []byte("\n")) + 1
	var rules []rule
	for n, line := range strings.Split(string(text[i+len(rulesBegin):j]), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "```") || strings.HasPrefix(line, "#") {
			continue
		}
		if m := ruleLine.FindStringSubmatch(line); m != nil {
			rules = append(rules, rule{line: first + n, text: line, known: m[1] != "", from: list(m[2]), link: m[3] == "link", to: list(m[4]), except: list(m[5])})
		} else if m := layerLine.FindStringSubmatch(line); m != nil {
			rules = append(rules, layers(first+n, line, m[1])...)
		} else {
			t.Fatalf("%s line %d: %q is neither \"FROM must not import|link TO [except WHO] -- why\" nor \"layers: A B < C < ... -- why\"", doc, first+n, line)
		}
	}
	if len(rules) == 0 {
		t.Fatalf("%s: the rules block holds no rule", doc)
	}
	return rules
}

// layers turns "A B < C < D" into one rule per floor: a package of a
// layer imports nothing of the layers after it.
func layers(n int, text, chain string) []rule {
	var floors [][]string
	for _, f := range strings.Split(chain, "<") {
		floors = append(floors, strings.Fields(f))
	}
	var out []rule
	for k := 0; k+1 < len(floors); k++ {
		out = append(out, rule{line: n, text: text, from: floors[k], to: slices.Concat(floors[k+1:]...)})
	}
	return out
}

func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ", ")
}

// match: "*" is every package of the module, "p/..." p and every package
// below it, anything else that package only.
func match(pattern, pkg string) bool {
	switch {
	case pattern == "*":
		return !external(pkg)
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if match(p, pkg) {
			return true
		}
	}
	return false
}

// external: another module's package (its first element has a dot).
func external(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return strings.Contains(first, ".")
}

// unknownNames are the rule's patterns that name nothing: from and except
// must match a package that ships, to one of the module (the test kit
// included, which ships in nothing). Other modules' names are not
// checked: the rule may keep one out of go.mod altogether.
func (r rule) unknownNames(ships, all map[string][]string) []string {
	var bad []string
	check := func(patterns []string, in map[string][]string) {
		for _, p := range patterns {
			if external(p) {
				continue
			}
			found := false
			for pkg := range in {
				found = found || match(p, pkg)
			}
			if !found {
				bad = append(bad, p)
			}
		}
	}
	check(r.from, ships)
	check(r.except, ships)
	check(r.to, all)
	return bad
}

// breaches are the arrows (or, for link, the chains of arrows) of the
// shipped packages that break r, sorted.
func (r rule) breaches(all, ships map[string][]string) []string {
	var out []string
	for pkg := range ships {
		if !matchAny(r.from, pkg) || matchAny(r.except, pkg) {
			continue
		}
		if !r.link {
			for _, d := range all[pkg] {
				if matchAny(r.to, d) {
					out = append(out, pkg+" → "+d)
				}
			}
			continue
		}
		if chain := r.reach(all, pkg); chain != nil {
			out = append(out, strings.Join(chain, " → "))
		}
	}
	sort.Strings(out)
	return out
}

// reach is the shortest chain of imports from pkg to a package r.to
// matches, nil when there is none.
func (r rule) reach(all map[string][]string, pkg string) []string {
	prev := map[string]string{pkg: ""}
	queue := []string{pkg}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p != pkg && matchAny(r.to, p) {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append([]string{p}, chain...)
			}
			return chain
		}
		for _, d := range all[p] {
			if _, seen := prev[d]; !seen {
				prev[d] = p
				queue = append(queue, d)
			}
		}
	}
	return nil
}

// The rules' own reading: a rule that matched nothing by mistake would
// guard nothing, so the matcher and the chain are held here.
func TestRuleMatching(t *testing.T) {
	g := map[string][]string{
		"cmd/a":              {"internal/x", "example.com/m/n"},
		"internal/x":         {"internal/y/z"},
		"internal/y/z":       {"internal/testkit/k"},
		"internal/testkit/k": nil,
	}
	for _, c := range []struct {
		r    rule
		want string
	}{
		{rule{from: []string{"internal/x"}, to: []string{"internal/y/..."}}, "internal/x → internal/y/z"},
		{rule{from: []string{"internal/x"}, to: []string{"internal/y"}}, ""},
		{rule{from: []string{"*"}, to: []string{"internal/y/z"}, except: []string{"internal/x"}}, ""},
		{rule{from: []string{"cmd/..."}, to: []string{"internal/testkit/..."}, link: true}, "cmd/a → internal/x → internal/y/z → internal/testkit/k"},
		{rule{from: []string{"cmd/a"}, to: []string{"example.com/m/..."}}, "cmd/a → example.com/m/n"},
		{rule{from: []string{"cmd/a"}, to: []string{"*"}}, "cmd/a → internal/x"},
	} {
		if got := strings.Join(c.r.breaches(g, g), "; "); got != c.want {
			t.Errorf("%+v: %q, want %q", c.r, got, c.want)
		}
	}
	if got := layers(1, "", "a b < c < d"); len(got) != 2 || fmt.Sprint(got[0].from, got[0].to, got[1].from, got[1].to) != "[a b] [c d] [c] [d]" {
		t.Errorf("layers: %+v", got)
	}
}
