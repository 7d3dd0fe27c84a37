//go:build !(linux && amd64)

package faultinject

import (
	"errors"
	"os/exec"
	"time"
)

// Supported says whether Trace works here (linux/amd64).
const Supported = false

// Trace needs linux/amd64: the tracer reads amd64 registers.
func Trace(cmd *exec.Cmd, within []string, fault *Fault, limit time.Duration) (*Result, error) {
	return nil, errors.New("faultinject: the tracer runs on linux/amd64 only")
}
