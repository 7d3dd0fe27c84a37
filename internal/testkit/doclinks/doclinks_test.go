// Package doclinks holds the README to what an operator reads first and
// every relative link in the README and docs/ to a file and heading that
// exist: the reference moved from the README into docs/ pages, and a link
// left pointing at a section that moved is the failure this catches.
package doclinks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

const root = "../../.." // the repository, from this package's directory

// maxREADME is issue 33's limit: the README is for an operator in a hurry.
const maxREADME = 400

var (
	linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeRE = regexp.MustCompile("`[^`]*`")
	headRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	urlRE  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z+.-]*:`) // http:, https:, mailto:
)

// prose returns the lines outside fenced code blocks, inline code blanked,
// with their 1-based line numbers.
func prose(text string) (lines []string, numbers []int) {
	fence := false
	for i, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
			continue
		}
		if !fence {
			lines = append(lines, codeRE.ReplaceAllString(l, "``"))
			numbers = append(numbers, i+1)
		}
	}
	return lines, numbers
}

// slug is GitHub's anchor for a heading: lower case, punctuation other
// than '-' and '_' dropped, spaces to '-'. The README's links into docs/
// exercise it: "What it reads (host facts)", "Kubernetes upgrades: ...".
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are a markdown file's heading slugs, repeats numbered as GitHub does.
func anchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	lines, _ := prose(text)
	for _, l := range lines {
		if m := headRE.FindStringSubmatch(l); m != nil {
			s := slug(m[1])
			if n := seen[s]; n > 0 {
				out[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				out[s] = true
			}
			seen[s]++
		}
	}
	return out
}

func read(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestREADMEIsShort(t *testing.T) {
	if n := strings.Count(read(t, filepath.Join(root, "README.md")), "\n"); n > maxREADME {
		t.Errorf("README.md has %d lines, over %d: move reference material into a docs/ page and link it", n, maxREADME)
	}
}

func TestRelativeLinksResolve(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md under %s (%v)", root, err)
	}
	for _, file := range append([]string{filepath.Join(root, "README.md")}, docs...) {
		rel, _ := filepath.Rel(root, file)
		lines, numbers := prose(read(t, file))
		for i, l := range lines {
			for _, m := range linkRE.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if urlRE.MatchString(target) {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), path)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", rel, numbers[i], target, path)
						continue
					}
				}
				if anchor != "" && !anchors(read(t, dest))[anchor] {
					t.Errorf("%s:%d: link %q: no heading with anchor #%s in %s", rel, numbers[i], target, anchor, filepath.Base(dest))
				}
			}
		}
	}
}
