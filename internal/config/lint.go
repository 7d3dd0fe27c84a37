package config

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Lint checks one operator config file's bytes exactly as the generator,
// apply and detect read the file, and nothing else: no environment, no
// kernel command line, no host. It is what a config-management pipeline
// runs before a push, so that a typo is refused in the pipeline rather than
// by apply on every node at RKE2's next start. The error is as Load's,
// with the line of the offending key or value beside the file, as a
// compiler prints it: "FILE:LINE: key: value: what to do".
func Lint(file string, data []byte) error {
	_, err := parseYAML(file, data)
	if err == nil {
		return nil
	}
	line := Line(err)
	if line == 0 {
		return err
	}
	msg := strings.TrimPrefix(err.Error(), file+": ")
	// The boot's messages name no line, except YAML's own syntax errors and
	// a few that say which lines: the line is beside the file now.
	msg = strings.Replace(msg, "line "+strconv.Itoa(line)+": ", "", 1)
	return &lineError{line: line, err: fmt.Errorf("%s:%d: %s", file, line, msg)}
}

// Line is the line of the operator's file an error from reading it points
// at, or 0 when it names none (the file as a whole, another source).
func Line(err error) int {
	var l *lineError
	if errors.As(err, &l) {
		return l.line
	}
	return 0
}

// lineError is an error about one line of the operator's file. Its text is
// the error's own: the messages at boot name the file and the key; Lint
// puts the line beside the file.
type lineError struct {
	line int
	err  error
}

func (e *lineError) Error() string { return e.err.Error() }
func (e *lineError) Unwrap() error { return e.err }

// atLine marks err as being about line n (from 1). An error that already
// knows its line keeps it: the innermost node is the most exact.
func atLine(n int, err error) error {
	if n <= 0 || Line(err) != 0 {
		return err
	}
	return &lineError{line: n, err: err}
}

// itemError is a bad item of a list, by its index from 0, so the file's
// reader can point at the item's own line.
type itemError struct {
	index int
	err   error
}

func (e *itemError) Error() string { return fmt.Sprintf("item %d: %v", e.index+1, e.err) }
func (e *itemError) Unwrap() error { return e.err }

// yamlLine finds the line yaml.v3 names in a syntax error ("line 3: ...").
// Compiled at the first broken file, not at every start (as pciID).
var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): `) })

func syntaxLine(msg string) int {
	m := yamlLine().FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1]) // digits only; an overflow is 0: no line
	return n
}
