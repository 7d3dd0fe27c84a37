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

// runIn runs subcommand cmd with args against the host root root (a
// fixture directory).
func runIn(t *testing.T, root, cmd string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runMain(t, append([]string{"--root", root, cmd}, args...)...)
}
