package fleetview

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Every text the view prints comes from Node objects, which each node
// writes for itself: a hostile or broken node must not reach the
// operator's terminal with more than characters. C0 and C1 controls
// start escape sequences (U+009B is CSI, U+009D OSC, as ESC [ and ESC ]
// are), DEL and the line and paragraph separators break rows, and the
// bidirectional overrides, embeddings, isolates and marks reorder what
// follows them on the line, so one node's text could disguise another
// row.

// unsafe says r must not reach a terminal as it is.
func unsafe(r rune) bool {
	switch {
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c: // bidi marks
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// oneLine is s safe for one cell of the table: unsafe characters become
// spaces and bytes that are not UTF-8 become U+FFFD, so the result is
// valid UTF-8 without a single unsafe rune.
func oneLine(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case unsafe(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// jsonSafe escapes, in encoding/json's output, the unsafe runes it
// writes as they are (C1 controls, the bidi characters): the data stays
// the node's, byte for byte after decoding, and a terminal shows
// \u009b instead of obeying it. Outside strings JSON text is ASCII, so
// every such rune is inside a string, where the escape means the same.
func jsonSafe(data []byte) []byte {
	var b strings.Builder
	for _, r := range string(data) {
		if r >= 0x80 && unsafe(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return []byte(b.String())
}

// truncate cuts s to at most max runes, the last one an ellipsis when it
// had to cut.
func truncate(s string, max int) string {
	if max < 1 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
