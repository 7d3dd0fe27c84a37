// Package check holds the two assertions tests here repeat most: a text
// says each of some phrases, and a function gives each output of a table.
// It is test support only.
package check

import (
	"strings"
	"testing"
)

// Says fails t, once per phrase, for each phrase text does not contain,
// naming what the text is and showing it whole.
func Says(t testing.TB, what, text string, phrases ...string) {
	t.Helper()
	for _, p := range phrases {
		if !strings.Contains(text, p) {
			t.Errorf("%s lacks %q:\n%s", what, p, text)
		}
	}
}

// Table fails t for each input of table on which f does not give the
// output the table holds; name is f's name in the message.
func Table[In, Out comparable](t testing.TB, name string, f func(In) Out, table map[In]Out) {
	t.Helper()
	for in, want := range table {
		if got := f(in); got != want {
			t.Errorf("%s(%#v) = %#v, want %#v", name, in, got, want)
		}
	}
}
