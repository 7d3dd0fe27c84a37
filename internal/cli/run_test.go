package cli

import (
	"bytes"
	"testing"
)

// runMain runs the real command line with args after the program name and
// returns its exit code and output.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(append([]string{"rke2-proxy-backend"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}
