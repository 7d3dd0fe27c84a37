package fleetview

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Row is one node as the view shows it; -o json prints the rows.
type Row struct {
	Node     string `json:"node"`
	Planned  string `json:"planned"`
	Verified string `json:"verified"`
	Mode     string `json:"mode"`
	Version  string `json:"version"`
	Source   string `json:"source"`
	// Problem is the condition's status: False (none), True, Unknown, or
	// "" when the node has never published one.
	Problem string `json:"problem"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// VerifiedAt is the last proof ("" none); Age is its age at the view.
	VerifiedAt string `json:"verified_at,omitempty"`
	Age        string `json:"age"`
}

// RowOf is n's row at now.
func RowOf(n Node, now time.Time) Row {
	a := n.Annotations
	r := Row{Node: n.Name, Planned: n.Labels[vocab.NodeLabelPlanned], Verified: a[vocab.NodeAnnotationVerifiedBackend], Mode: a[vocab.NodeAnnotationMode],
		Version: a[vocab.NodeAnnotationVersion], Source: a[vocab.NodeAnnotationDecisionSource], VerifiedAt: a[vocab.NodeAnnotationVerifiedAt], Age: "-"}
	if c := n.Condition; c != nil {
		r.Problem, r.Reason, r.Message = c.Status, c.Reason, c.Message
	}
	if at, err := time.Parse(time.RFC3339, r.VerifiedAt); err == nil {
		r.Age = Age(now.Sub(at))
	}
	return r
}

// HasProblem is --problems: a problem named (True), the node cannot tell
// (Unknown), or it never published its condition although the planned
// label says the tool runs there.
func (r Row) HasProblem() bool {
	return r.Problem == "True" || r.Problem == "Unknown" || (r.Problem == "" && r.Planned != "")
}

// Age is d as kubectl prints ages: the two largest units, e.g. 3d4h, 5m10s.
func Age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return twoUnits(s/60, "m", s%60, "s")
	case s < 86400:
		return twoUnits(s/3600, "h", s%3600/60, "m")
	default:
		return twoUnits(s/86400, "d", s%86400/3600, "h")
	}
}

func twoUnits(a int64, ua string, b int64, ub string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, ua)
	}
	return fmt.Sprintf("%d%s%d%s", a, ua, b, ub)
}

// Table is rows as kubectl-style columns. Empty cells print as "<none>";
// a problem's reason and message follow its status.
func Table(rows []Row) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	fmt.Fprintln(w, "NODE\tPLANNED\tVERIFIED\tMODE\tVERSION\tSOURCE\tPROBLEM\tAGE")
	for _, r := range rows {
		problem := cell(r.Problem)
		if r.Problem == "True" || r.Problem == "Unknown" {
			problem = r.Problem + ": " + oneLine(r.Reason)
			if r.Message != "" {
				problem += ": " + oneLine(r.Message)
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.Node), cell(r.Planned), cell(r.Verified), cell(r.Mode),
			cell(r.Version), cell(r.Source), problem, r.Age)
	}
	w.Flush()
	return b.String()
}

// JSON is rows as -o json prints them.
func JSON(rows []Row) ([]byte, error) {
	if rows == nil {
		rows = []Row{}
	}
	b, err := json.MarshalIndent(struct {
		Nodes []Row `json:"nodes"`
	}{rows}, "", "  ")
	return append(b, '\n'), err
}

func cell(v string) string {
	if v == "" {
		return "<none>"
	}
	return oneLine(v)
}

// oneLine keeps a value written by a node from breaking the table: tabs,
// newlines and other control characters become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
