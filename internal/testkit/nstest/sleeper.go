package nstest

import (
	"bufio"
	"os/exec"
	"strings"
	"testing"
)

// Sleeper starts a process in a network namespace of its own (unshare -n,
// from the test's namespace), runs script there first, and returns its
// pid once script is done: a pod's sandbox as the census finds it. The
// process is ended, by its pid, when the test ends.
func Sleeper(t testing.TB, script string) int {
	t.Helper()
	cmd := exec.Command("unshare", "-n", "sh", "-ec", script+"\necho ready\nexec sleep 600")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("namespace setup %q: %q, %v\n%s", script, line, err, stderr.String())
	}
	return cmd.Process.Pid
}
