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
	"syscall"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
)

// ChildEnv marks a re-executed process as a bench child. Its value is
// only the file descriptor the child's orders come on (ordersFD): the
// variable alone proves nothing, since anyone can set it. The orders are
// written by the parent into a pipe only it holds, after it started the
// child in a network namespace of its own and read which namespace that
// is; the child loads rules only when it is in exactly that namespace and
// not in the parent's.
const ChildEnv = "RKE2_PROXY_BACKEND_BENCH_CHILD"

// ordersFD is the child's fd 3, the first of exec.Cmd.ExtraFiles.
const ordersFD = 3

// ordersTimeout bounds the child's wait for its orders: the parent writes
// them as soon as the child exists.
const ordersTimeout = 10 * time.Second

// netnsID names the network namespace of a process ("self" or a PID), as
// "net:[4026531840]" ("" when it cannot be read).
func netnsID(pid string) string {
	id, _ := os.Readlink("/proc/" + pid + "/ns/net")
	return id
}

// RunIsolated measures backend b at n services in a network namespace of
// its own: it re-executes self (the argv that reaches ChildMain: the
// binary and its bench subcommand) in a network namespace made by the
// clone that starts it (root only), the way boundexec's NewNetns does. The
// namespace dies with the child, and its rules with it. The child's
// progress lines go to progress as they come.
func RunIsolated(ctx context.Context, self []string, b backend.Backend, n int, progress io.Writer) (bench.Result, error) {
	parent := netnsID("self")
	if parent == "" {
		return bench.Result{}, fmt.Errorf("cannot read /proc/self/ns/net, so a fresh network namespace could not be proven: bench refuses to run")
	}
	orders, give, err := os.Pipe()
	if err != nil {
		return bench.Result{}, fmt.Errorf("a pipe for the bench child's orders: %w", err)
	}
	defer give.Close()
	cmd := exec.CommandContext(ctx, self[0], self[1:]...)
	cmd.Env = append(withoutChildEnv(os.Environ()), fmt.Sprintf("%s=%d", ChildEnv, ordersFD))
	cmd.ExtraFiles = []*os.File{orders}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, progress
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Start()
	orders.Close()
	if err != nil {
		return bench.Result{}, fmt.Errorf("%s: start the bench child in a new network namespace: %w", b, err)
	}
	// Until it is waited for, the PID is the child's: its namespace is the
	// one the clone made.
	child := netnsID(strconv.Itoa(cmd.Process.Pid))
	if child == "" || child == parent {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return bench.Result{}, fmt.Errorf("%s: the bench child is not in a network namespace of its own (%q, ours %s): bench refuses to run", b, child, parent)
	}
	_, werr := fmt.Fprintf(give, "%s|%s|%s|%d\n", child, parent, b, n)
	give.Close()
	if err := cmd.Wait(); err != nil {
		return bench.Result{}, fmt.Errorf("%s in a new network namespace: %w", b, err)
	}
	if werr != nil {
		return bench.Result{}, fmt.Errorf("%s: give the bench child its orders: %w", b, werr)
	}
	var res bench.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return bench.Result{}, fmt.Errorf("%s: the bench child's result is not JSON (%w): %.200s", b, err, stdout.String())
	}
	if res.Backend != b {
		return bench.Result{}, fmt.Errorf("the bench child measured %q, not %s", res.Backend, b)
	}
	return res, nil
}

func withoutChildEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, ChildEnv+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// IsChild reports whether this process was started as a bench child (or
// has ChildEnv set by mistake: ChildMain then refuses).
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// ChildMain is the child's side of RunIsolated: take the orders from the
// parent's pipe, check this is the namespace the parent made, measure,
// print the result as JSON. It returns the exit code.
func ChildMain(ctx context.Context, stdout, stderr io.Writer) int {
	o, err := childOrders()
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	res, err := Measure(ctx, o.backend, o.services, stderr)
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

type orders struct {
	child, parent string
	backend       backend.Backend
	services      int
}

// childOrders reads and checks the orders; every error says that nothing
// was loaded and why.
func childOrders() (orders, error) {
	v := os.Getenv(ChildEnv)
	notOurs := fmt.Sprintf("%s=%q is set, but this process was not started by bench", ChildEnv, v)
	const refuse = "refusing to load rules into this network namespace; unset the variable"
	if v != strconv.Itoa(ordersFD) {
		return orders{}, fmt.Errorf("%s: %s", notOurs, refuse)
	}
	line, err := readOrders(ordersFD)
	if err != nil {
		return orders{}, fmt.Errorf("%s (%v): %s", notOurs, err, refuse)
	}
	o, err := parseOrders(line)
	if err != nil {
		return orders{}, fmt.Errorf("%s (%v): %s", notOurs, err, refuse)
	}
	self := netnsID("self")
	switch {
	case self == "" || self != o.child:
		return orders{}, fmt.Errorf("this process is in network namespace %q, not %s, the one bench made for it: %s", self, o.child, refuse)
	case self == o.parent:
		return orders{}, fmt.Errorf("still in the parent's network namespace %s: %s", o.parent, refuse)
	case self == netnsID("1"):
		return orders{}, fmt.Errorf("in the network namespace of PID 1 (%s), the node's own: %s", self, refuse)
	}
	return o, nil
}

// readOrders reads one line from fd, which must be a pipe, waiting at most
// ordersTimeout.
func readOrders(fd int) (string, error) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return "", fmt.Errorf("no orders on fd %d: %w", fd, err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return "", fmt.Errorf("fd %d is not the pipe bench passes", fd)
	}
	// Non-blocking, so the read below can time out.
	if err := syscall.SetNonblock(fd, true); err != nil {
		return "", fmt.Errorf("fd %d: %w", fd, err)
	}
	f := os.NewFile(uintptr(fd), "bench orders")
	defer f.Close()
	if err := f.SetReadDeadline(time.Now().Add(ordersTimeout)); err != nil {
		return "", fmt.Errorf("fd %d: %w", fd, err)
	}
	data, err := io.ReadAll(io.LimitReader(f, 512))
	if err != nil {
		return "", fmt.Errorf("fd %d: %w", fd, err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return line, nil
}

func parseOrders(line string) (orders, error) {
	parts := strings.Split(line, "|")
	if len(parts) != 4 || !strings.HasPrefix(parts[0], "net:[") || !strings.HasPrefix(parts[1], "net:[") {
		return orders{}, fmt.Errorf("orders %q: want CHILD-NETNS|PARENT-NETNS|BACKEND|N", line)
	}
	b, err := backend.Parse(parts[2])
	if err != nil {
		return orders{}, fmt.Errorf("orders: %w", err)
	}
	n, err := strconv.Atoi(parts[3])
	if err != nil || n < 0 {
		return orders{}, fmt.Errorf("orders: N %q is not a service count", parts[3])
	}
	return orders{child: parts[0], parent: parts[1], backend: b, services: n}, nil
}
