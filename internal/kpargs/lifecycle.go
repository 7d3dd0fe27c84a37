// Package kpargs judges kube-proxy arguments against a Kubernetes version:
// which --feature-gates and flags make that version's kube-proxy refuse to
// start, and which it ignores. The facts are one data file,
// lifecycle.txt, so a new Kubernetes release is a line per change.
package kpargs

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Kinds of lifecycle.txt rows (its header says what each means).
const (
	kindRemoved  = "removed"
	kindLocked   = "locked"
	kindAdded    = "added"
	kindIPVSOff  = "ipvs-off"
	kindIPVSGone = "ipvs-gone"
	// kindIPVSDeprecated: kube-proxy warns about ipvs mode but runs it.
	kindIPVSDeprecated = "ipvs-deprecated"
)

//go:embed lifecycle.txt
var lifecycleText string

// Fact is one row of lifecycle.txt.
type Fact struct {
	Kind string
	// Gate is the feature gate's name; Value the locked value (locked only).
	Gate  string
	Value bool
	// Minor is the Kubernetes 1.x minor the fact holds from.
	Minor  int
	Source string
	// Line is the row's line in lifecycle.txt, for errors.
	Line int
}

// Facts returns lifecycle.txt's rows. TestLifecycleFileParses fails on any
// error in the file, so none ships; were one to, the rows are dropped
// rather than panic on the boot path (the generator must never fail).
var Facts = sync.OnceValue(func() []Fact {
	facts, err := ParseLifecycle(lifecycleText)
	if err != nil {
		return nil
	}
	return facts
})

// ParseLifecycle reads lifecycle.txt's format: "kind name minor source",
// blank lines and #-comments skipped, every error naming the line.
func ParseLifecycle(text string) ([]Fact, error) {
	var facts []Fact
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := parseFact(line)
		if err != nil {
			return nil, fmt.Errorf("kpargs lifecycle.txt line %d %q: %w", i+1, line, err)
		}
		f.Line = i + 1
		facts = append(facts, f)
	}
	return facts, nil
}

func parseFact(line string) (Fact, error) {
	fields := strings.Fields(line)
	if len(fields) < 4 {
		return Fact{}, fmt.Errorf("want \"kind name minor source\"")
	}
	f := Fact{Kind: fields[0], Gate: fields[1], Source: strings.Join(fields[3:], " ")}
	major, minor, ok := strings.Cut(fields[2], ".")
	n, err := strconv.Atoi(minor)
	if !ok || major != "1" || err != nil || n < 0 {
		return Fact{}, fmt.Errorf("minor %q: want 1.N", fields[2])
	}
	f.Minor = n
	switch f.Kind {
	case kindLocked:
		gates, err := ParseGates(f.Gate)
		if err != nil || len(gates) != 1 {
			return Fact{}, fmt.Errorf("locked %q: want one Gate=true|false", f.Gate)
		}
		f.Gate, f.Value = gates[0].Name, gates[0].Value
	case kindRemoved, kindAdded, kindIPVSOff, kindIPVSGone, kindIPVSDeprecated:
		if !validGateName(f.Gate) {
			return Fact{}, fmt.Errorf("gate %q: want a gate name", f.Gate)
		}
	default:
		return Fact{}, fmt.Errorf("kind %q: want removed, locked, added, ipvs-deprecated, ipvs-off or ipvs-gone", f.Kind)
	}
	return f, nil
}

// validGateName: Kubernetes gate names are CamelCase words.
func validGateName(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// factFor returns the fact of kind about gate that holds at minor, the
// newest such one, or false.
func factFor(kind, gate string, minor int) (Fact, bool) {
	var best Fact
	found := false
	for _, f := range Facts() {
		if f.Kind == kind && f.Gate == gate && f.Minor <= minor && (!found || f.Minor > best.Minor) {
			best, found = f, true
		}
	}
	return best, found
}

// firstFact returns the fact of kind about gate (the first row), or false.
func firstFact(kind, gate string) (Fact, bool) {
	for _, f := range Facts() {
		if f.Kind == kind && f.Gate == gate {
			return f, true
		}
	}
	return Fact{}, false
}
