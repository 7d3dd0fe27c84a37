package vocab

import (
	"bytes"
	"strings"
)

// iptables' argument quoting, read and written: Quote prints an argument as
// iptables-save does, SplitArgs reads words back, NextArg does the same in
// place for the readers' hot loop, and EndsInQuote/QuoteState find where a
// quoted argument holding a newline ends. All four follow one grammar:
// "..." groups words; \", \\ and \' escape inside quotes.

// SplitArgs splits iptables-save argument text into words, undoing its
// quoting: "..." groups words; \", \\ and \' escape inside quotes. Its
// loop repeats unquoteArg's on purpose: it is the plain reading that
// iptsave's FuzzIptablesRule checks the in-place scanner (NextArg,
// unquoteArg's fast path) against.
func SplitArgs(text string) []string {
	var (
		args   []string
		cur    strings.Builder
		inWord bool
		quoted bool
	)
	for i := 0; i < len(text); i++ {
		ch := text[i]
		switch {
		case quoted && ch == '\\' && i+1 < len(text) && strings.IndexByte(`"\\'`, text[i+1]) >= 0:
			i++
			cur.WriteByte(text[i])
		case ch == '"':
			quoted = !quoted
			inWord = true
		case ch == ' ' && !quoted:
			if inWord {
				args = append(args, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		args = append(args, cur.String())
	}
	return args
}

// Quote quotes an argument the way iptables-save prints it
// (xtables_save_string): bare when it is only letters, digits, '_' and
// '-', else in double quotes with '"', '\' and '\” escaped. Rule text
// built with it equals what iptables-save prints for the same rule.
func Quote(s string) string {
	plain := s != ""
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	if plain {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c == '\'' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}

// NextArg returns the word starting at or after i, unquoted, and where the
// scan continues. Only a word with quotes or escapes is copied.
func NextArg(text string, i int) (string, int) {
	for i < len(text) && text[i] == ' ' {
		i++
	}
	start := i
	for ; i < len(text) && text[i] != ' '; i++ {
		if text[i] == '"' || text[i] == '\\' {
			return unquoteArg(text, start)
		}
	}
	return text[start:i], i
}

// unquoteArg reads one word at start the way SplitArgs does.
func unquoteArg(text string, start int) (string, int) {
	// The common case, "a plain quoted comment", needs no copy.
	if text[start] == '"' {
		if end := strings.IndexAny(text[start+1:], `"\\`); end >= 0 && text[start+1+end] == '"' {
			after := start + 1 + end + 1
			if after == len(text) || text[after] == ' ' {
				return text[start+1 : start+1+end], after
			}
		}
	}
	var b strings.Builder
	quoted := false
	i := start
	for ; i < len(text); i++ {
		ch := text[i]
		switch {
		case quoted && ch == '\\' && i+1 < len(text) && strings.IndexByte(`"\\'`, text[i+1]) >= 0:
			i++
			b.WriteByte(text[i])
		case ch == '"':
			quoted = !quoted
		case ch == ' ' && !quoted:
			return b.String(), i
		default:
			b.WriteByte(ch)
		}
	}
	return b.String(), i
}

// EndsInQuote reports whether a rule line ends inside a quoted argument,
// reading quotes and escapes the way SplitArgs does. Most lines have no
// quote at all, which one IndexByte finds.
func EndsInQuote(line []byte) bool {
	if bytes.IndexByte(line, '"') < 0 {
		return false
	}
	return QuoteState(line, false)
}

// QuoteState continues a quote scan over more of a line: quoted is the
// state before it, the result the state after. A backslash that ends a
// piece never escapes the newline after it (SplitArgs reads it as itself).
func QuoteState(piece []byte, quoted bool) bool {
	for i := 0; i < len(piece); i++ {
		switch ch := piece[i]; {
		case quoted && ch == '\\' && i+1 < len(piece) && bytes.IndexByte([]byte(`"\\'`), piece[i+1]) >= 0:
			i++
		case ch == '"':
			quoted = !quoted
		}
	}
	return quoted
}
