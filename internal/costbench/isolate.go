package costbench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/costbench/costfile"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// ChildEnv tells a re-executed process it is a bench child: its value is
// "PARENT-NETNS|BACKEND|N". The child refuses to load anything unless its
// network namespace differs from the parent's, so the host's rules are
// never touched even if unshare were to do nothing.
const ChildEnv = "RKE2_PROXY_BACKEND_BENCH_CHILD"

// netnsID names the caller's network namespace ("net:[4026531840]").
func netnsID() string {
	id, _ := os.Readlink("/proc/self/ns/net")
	return id
}

// RunIsolated measures backend b at n services in a network namespace of
// its own: it runs `unshare -n SELF...` with ChildEnv set, where self is
// the argv that reaches ChildMain (the binary and its bench subcommand).
// The namespace dies with the child, and its rules with it. The child's
// progress lines go to progress as they come.
func RunIsolated(ctx context.Context, self []string, b backend.Backend, n int, progress io.Writer) (costfile.Result, error) {
	unshare, err := hostfs.LookTool("unshare", "bench (a throwaway network namespace per backend)")
	if err != nil {
		return costfile.Result{}, err
	}
	parent := netnsID()
	if parent == "" {
		return costfile.Result{}, fmt.Errorf("cannot read /proc/self/ns/net, so a fresh network namespace could not be proven: bench refuses to run")
	}
	cmd := exec.CommandContext(ctx, unshare, append([]string{"-n"}, self...)...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", ChildEnv, parent, b, n))
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, progress
	cmd.WaitDelay = 5 * 1e9
	if err := cmd.Run(); err != nil {
		return costfile.Result{}, fmt.Errorf("%s in a new network namespace: %w", b, err)
	}
	var res costfile.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return costfile.Result{}, fmt.Errorf("%s: the bench child's result is not JSON (%w): %.200s", b, err, stdout.String())
	}
	if res.Backend != b {
		return costfile.Result{}, fmt.Errorf("the bench child measured %q, not %s", res.Backend, b)
	}
	return res, nil
}

// IsChild reports whether this process was started by RunIsolated.
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// ChildMain is the child's side of RunIsolated: check the namespace is new,
// measure, print the result as JSON. It returns the exit code.
func ChildMain(ctx context.Context, stdout, stderr io.Writer) int {
	parent, b, n, err := parseChildEnv(os.Getenv(ChildEnv))
	if err == nil && (netnsID() == "" || netnsID() == parent) {
		err = fmt.Errorf("refusing to load rules: still in the parent's network namespace %s", parent)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench child: %v\n", err)
		return 1
	}
	res, err := Measure(ctx, b, n, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bench child: %v\n", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintf(stderr, "bench child: %v\n", err)
		return 1
	}
	return 0
}

func parseChildEnv(v string) (parent string, b backend.Backend, n int, err error) {
	parts := strings.Split(v, "|")
	if len(parts) != 3 {
		return "", "", 0, fmt.Errorf("%s=%q: want PARENT-NETNS|BACKEND|N", ChildEnv, v)
	}
	if b, err = backend.Parse(parts[1]); err != nil {
		return "", "", 0, fmt.Errorf("%s: %w", ChildEnv, err)
	}
	if n, err = strconv.Atoi(parts[2]); err != nil || n < 0 {
		return "", "", 0, fmt.Errorf("%s: N %q is not a service count", ChildEnv, parts[2])
	}
	return parts[0], b, n, nil
}
