package oracle

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// heartbeat is how often a running build says it is still running: a cold
// build of one minor is many minutes of compiling on two shared cores, and
// a newcomer's first `make test` must show it is alive (at least a line a
// minute).
const heartbeat = 30 * time.Second

// progressOut is where builds report; the tests of the reporting replace it.
var progressOut io.Writer = os.Stderr

// runReported runs cmd, a `go build -v` of what, saying so when it starts,
// every interval while it runs (time so far, packages compiled so far and
// the last one: go build -v prints each package it compiles, none that its
// cache serves) and when it ends. It returns the build's combined output.
func runReported(cmd *exec.Cmd, what string, out io.Writer, interval time.Duration) ([]byte, error) {
	start := time.Now()
	fmt.Fprintf(out, "oracle: building %s (go build, cold: minutes on 2 cores)...\n", what)
	var log packageLog
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			n, _ := log.progress()
			fmt.Fprintf(out, "oracle: %s %s after %s, %d packages compiled\n", map[bool]string{true: "built", false: "failed to build"}[err == nil],
				what, time.Since(start).Round(time.Second), n)
			return log.bytes(), err
		case <-tick.C:
			n, last := log.progress()
			fmt.Fprintf(out, "oracle: still building %s: %s so far, %d packages compiled%s\n", what, time.Since(start).Round(time.Second), n, last)
		}
	}
}

// packageLog collects a build's output and counts the packages go build -v
// names (lines that are import paths; errors and downloads are not).
type packageLog struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	partial string
	n       int
	last    string
}

func (l *packageLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	lines := strings.Split(l.partial+string(p), "\n")
	l.partial = lines[len(lines)-1]
	for _, line := range lines[:len(lines)-1] {
		if importPath(line) {
			l.n++
			l.last = line
		}
	}
	return len(p), nil
}

func (l *packageLog) progress() (int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == "" {
		return l.n, ""
	}
	return l.n, ", last " + l.last
}

func (l *packageLog) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.buf.Bytes()...)
}

// importPath tells go build -v's package lines from the rest of its output
// ("go: downloading ...", compiler errors "file.go:1:2: ...", "# pkg").
func importPath(line string) bool {
	return line != "" && !strings.ContainsAny(line, " :\t#")
}
