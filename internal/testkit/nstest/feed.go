package nstest

import (
	"os/exec"
	"strings"
	"testing"
)

// Feed runs argv in the test's namespace with input on its stdin (a
// restore tool, nft -f -) and fails the test with the tool's output when
// it fails.
func Feed(t testing.TB, input string, argv ...string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(input)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s with %d bytes of input: %v\n%s", strings.Join(argv, " "), len(input), err, out)
	}
}
