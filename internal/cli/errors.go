package cli

import (
	"errors"
	"fmt"
)

// Exit codes, part of the command-line contract.
const (
	ExitOK      = 0
	ExitFailure = 1 // runtime failure or verification failed
	ExitUsage   = 2 // usage or configuration error
	// ExitCannotTell is verify's and adopt's exit status when they cannot
	// tell whether kube-proxy is right (verify.VerdictUnknown): a monitor
	// must not read it as a pass, nor page as for a broken node.
	ExitCannotTell = 3
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks a usage or configuration problem (exit 2).
func usageError(err error) error { return &exitError{code: ExitUsage, err: err} }

// failure marks a runtime failure (exit 1) with a message.
func failure(format string, args ...any) error {
	return &exitError{code: ExitFailure, err: fmt.Errorf(format, args...)}
}

// silentExit exits with code without printing anything more (the command
// already reported, e.g. verify's findings or check's one line).
func silentExit(code int) error { return &exitError{code: code, err: errors.New("")} }

func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return ExitFailure
}
