// Command kubectl-proxy_backend is `kubectl proxy-backend` (kubectl runs a
// plugin by its name, '-' written '_'): every node's planned and verified
// kube-proxy backend, read from the Node objects (internal/fleetview).
package main

import (
	"context"
	"os"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/fleetview"
)

func main() {
	env := fleetview.Env{Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr, Now: time.Now,
		Width: fleetview.TerminalWidth(int(os.Stdout.Fd()), os.Getenv)}
	os.Exit(fleetview.Run(context.Background(), os.Args[1:], env, fleetview.Connect))
}
