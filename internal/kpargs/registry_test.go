package kpargs

import (
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
)

// TestLifecycleAgainstKubeProxysRegistry asks kube-proxy's real feature
// gate registry of every minor the oracle builds (1.34-1.37) about every
// gate in lifecycle.txt, and holds the file and Check to its answers:
// a removed gate is unknown from its minor on and known the minor before;
// an added one unknown before its minor and known from it; a locked one
// refuses the other value; and Check refuses a --feature-gates value
// exactly when kube-proxy does. Newer minors (1.38) are source-read only:
// their registry does not build here yet (lifecycle.txt's sources say so).
func TestLifecycleAgainstKubeProxysRegistry(t *testing.T) {
	// Values that differ only in how they are written, about a gate every
	// minor here knows: the parser differential (ParseGates against
	// kube-proxy's flag type).
	spellings := []string{"NFTablesProxyMode", "NFTablesProxyMode=maybe", "NFTablesProxyMode=1", " NFTablesProxyMode = TRUE ", "NFTablesProxyMode=t",
		"NFTablesProxyMode=", "NFTablesProxyMode=true=", ",NFTablesProxyMode=True,", "NFTablesProxyMode=true,,", " ", ",", "NFTablesProxyMode=true, ",
		"NFTablesProxyMode\t=true", "NFTablesProxyMode=\ttrue"}
	questions := append([]string{}, spellings...)
	asked := map[string]bool{}
	for _, f := range Facts() {
		if !asked[f.Gate] {
			asked[f.Gate] = true
			questions = append(questions, f.Gate+"=true", f.Gate+"=false")
		}
	}
	for _, minor := range oracle.Minors {
		t.Run(minor, func(t *testing.T) {
			m, err := strconv.Atoi(strings.TrimPrefix(minor, "v1."))
			if err != nil {
				t.Fatal(err)
			}
			answers := ask(t, oracle.FeatureGates(t, minor), questions)
			v := rke2.KubeVersion{Major: 1, Minor: m, Patch: 0}
			for _, f := range Facts() {
				switch f.Kind {
				case kindRemoved:
					expectKnown(t, answers, f, m, m < f.Minor, m == f.Minor-1)
				case kindAdded:
					expectKnown(t, answers, f, m, m >= f.Minor, true)
				case kindLocked:
					if r, ok := firstFact(kindRemoved, f.Gate); m >= f.Minor && (!ok || m < r.Minor) {
						other := fmt.Sprintf("%s=%t", f.Gate, !f.Value)
						if a := answers[other]; !strings.Contains(a, "locked to "+strconv.FormatBool(f.Value)) {
							t.Errorf("lifecycle.txt line %d: %s locked from 1.%d, but kube-proxy %s says %q to %s", f.Line, f.Gate, f.Minor, minor, a, other)
						}
					}
				}
			}
			for _, q := range spellings {
				_, perr := ParseGates(q)
				// A lock, or a gate the minor no longer has (the spellings
				// name NFTablesProxyMode, removed in 1.38), refuses a value
				// the parser read: only a parse refusal is compared here.
				refused := strings.HasPrefix(answers[q], "refused ") && !strings.Contains(answers[q], "locked to") &&
					!strings.Contains(answers[q], "unrecognized feature gate")
				if refused != (perr != nil) {
					t.Errorf("kube-proxy %s: %q -> %q, but ParseGates says %v", minor, q, answers[q], perr)
				}
			}
			for _, q := range questions {
				if strings.TrimSpace(q) != q {
					// Check trims an item's edges, as the rest of the tool
					// reads kube-proxy-arg; whether RKE2 passes edge spaces
					// on is not established (YAML drops them unless quoted).
					continue
				}
				refused := strings.HasPrefix(answers[q], "refused ")
				checked := len(Refusing(Check(v, []rke2.Setting{{Value: "feature-gates=" + q}}))) > 0
				if refused != checked && !unlistedUnknown(answers[q], q) {
					t.Errorf("kube-proxy %s: %q -> %q, but Check refuses it: %v", minor, q, answers[q], checked)
				}
			}
		})
	}
}

// ask runs the registry program on questions and maps each to its answer.
func ask(t *testing.T, bin string, questions []string) map[string]string {
	t.Helper()
	out, err := exec.Command(bin, questions...).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < len(questions) {
		t.Fatalf("%s answered %d lines for %d questions", bin, len(lines), len(questions))
	}
	answers := map[string]string{}
	for i, q := range questions {
		answers[q] = lines[i]
	}
	return answers
}

// expectKnown checks that f.Gate is known to minor m exactly when known
// says so; sure is false where the table claims nothing (a removed gate
// may be younger than an older minor).
func expectKnown(t *testing.T, answers map[string]string, f Fact, m int, known, sure bool) {
	t.Helper()
	unknown := strings.Contains(answers[f.Gate+"=true"], "unrecognized feature gate") && strings.Contains(answers[f.Gate+"=false"], "unrecognized feature gate")
	switch {
	case !known && !unknown:
		t.Errorf("lifecycle.txt line %d: %s %s 1.%d, but kube-proxy 1.%d knows it (%q)", f.Line, f.Kind, f.Gate, f.Minor, m, answers[f.Gate+"=true"])
	case known && unknown && sure:
		t.Errorf("lifecycle.txt line %d: %s %s 1.%d, but kube-proxy 1.%d does not know it", f.Line, f.Kind, f.Gate, f.Minor, m)
	}
}

// unlistedUnknown: a refusal for a reason the table does not record, where
// Check rightly has nothing to say: a removed gate younger than this minor
// (never listed as added), or a gate that needs another one on (gate
// dependencies, from 1.36's registry; an operator turns both on together).
func unlistedUnknown(answer, question string) bool {
	name, _, _ := strings.Cut(question, "=")
	_, added := firstFact(kindAdded, name)
	return strings.Contains(answer, "unrecognized feature gate") && !added ||
		strings.Contains(answer, "depends on features that are disabled")
}
