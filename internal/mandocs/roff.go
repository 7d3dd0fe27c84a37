package mandocs

import (
	"fmt"
	"strings"
)

// roff writes man(7) source. Every piece of text goes through escape, so
// nothing from help strings is ever read as a request, an escape or (as
// with the markdown renderer this replaced) a tag: "<RKE2 config>" prints
// as written.
type roff struct{ b strings.Builder }

// escape makes s literal roff text: backslashes print, "-" is a real
// minus/hyphen-minus (options stay copy-pasteable), and a line starting
// with "." or "'" is text, not a request.
func escape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}

// quoteArg makes s one argument of a request (.TH, .SH).
func quoteArg(s string) string {
	return `"` + strings.ReplaceAll(escape(s), `"`, `\(dq`) + `"`
}

func bold(s string) string   { return `\fB` + escape(s) + `\fR` }
func italic(s string) string { return `\fI` + escape(s) + `\fR` }

// pathTerm is a file name in italics that may break after any "/" (\:
// adds a break point without a hyphen): the generator's drop-in paths are
// longer than a terminal line.
func pathTerm(p string) string {
	return `\fI` + strings.ReplaceAll(escape(p), "/", `/\:`) + `\fR`
}

// ref is a cross-reference such as rke2-proxy-backend-detect(1).
func ref(name, section string) string { return bold(name) + "(" + section + ")" }

func (r *roff) line(raw string) { r.b.WriteString(raw + "\n") }

func (r *roff) th(title, section, date, source, manual string) {
	r.line(fmt.Sprintf(".TH %s %s %s %s %s", quoteArg(title), quoteArg(section), quoteArg(date), quoteArg(source), quoteArg(manual)))
	// Paths, flags and variable names must stay whole and copy-pasteable:
	// no hyphenation, no stretched spaces.
	r.line(".nh")
	r.line(".ad l")
}

func (r *roff) sh(title string) { r.line(".SH " + quoteArg(title)) }

// para starts a paragraph of already escaped (or marked-up) text.
func (r *roff) para(marked string) {
	r.line(".PP")
	r.line(marked)
}

// item is a tagged paragraph: a term on its own line, then its text.
func (r *roff) item(markedTerm, markedText string) {
	r.line(".TP")
	r.line(markedTerm)
	r.line(markedText)
}

// literal prints lines as they are (indented, not filled): commands and
// aligned lists.
func (r *roff) literal(lines []string) {
	r.line(".PP")
	r.line(".RS 4")
	r.line(".nf")
	for _, l := range lines {
		r.line(escape(l))
	}
	r.line(".fi")
	r.line(".RE")
}

// prose turns help text into paragraphs: blank lines separate paragraphs,
// lines are refilled, and runs of indented lines stay as written (the
// aligned lists and commands in the help texts).
func (r *roff) prose(text string) {
	for _, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if p = strings.Trim(p, "\n"); p == "" {
			continue
		}
		var fill, lit []string
		flush := func() {
			if len(fill) > 0 {
				r.para(escape(strings.Join(fill, "\n")))
				fill = nil
			}
			if len(lit) > 0 {
				r.literal(dedent(lit))
				lit = nil
			}
		}
		for _, l := range strings.Split(p, "\n") {
			indented := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
			if indented && len(fill) > 0 || !indented && len(lit) > 0 {
				flush()
			}
			if indented {
				lit = append(lit, l)
			} else {
				fill = append(fill, l)
			}
		}
		flush()
	}
}

// dedent removes the indentation the lines share.
func dedent(lines []string) []string {
	common := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= common && common > 0 {
			l = l[common:]
		}
		out[i] = l
	}
	return out
}

func (r *roff) String() string { return r.b.String() }
