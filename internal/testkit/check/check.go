// Package check holds the assertions tests here repeat most: a text says
// each of some phrases, a function gives each output of a table, and an
// error is the missing-tool error an operator is shown. It is test support
// only.
package check

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
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

// MissingTool fails t unless err is hostfs's missing-tool error (the one
// naming the binary, who needed it and the package to install) and reads
// want exactly; what names the call in the message.
func MissingTool(t testing.TB, what string, err error, want string) {
	t.Helper()
	if !hostfs.IsMissingTool(err) || err == nil || err.Error() != want {
		t.Errorf("%s = %v\nwant the missing-tool error %s", what, err, want)
	}
}
