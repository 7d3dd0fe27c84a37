package fleetview

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

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
	// Problem is the condition's status as the view judges it: False
	// (none), True, Unknown, or "" when the node has never published one.
	// A condition whose heartbeat is older than the node's stale-after is
	// Unknown, whatever it said: the node stopped proving itself.
	Problem string `json:"problem"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Reported is what the node last said when the view calls it stale.
	Reported string `json:"reported,omitempty"`
	// Heartbeat is the condition's lastHeartbeatTime, HeartbeatAge its
	// age at the view.
	Heartbeat    string `json:"heartbeat,omitempty"`
	HeartbeatAge string `json:"heartbeat_age,omitempty"`
	// VerifiedAt is the last proof ("" none); Age is its age at the view.
	VerifiedAt string `json:"verified_at,omitempty"`
	Age        string `json:"age"`
	// LegacyFree is the node's last legacy-xtables census as it published
	// it ("yes", "no; namespaces=...", "unknown; why"; "" none ran).
	LegacyFree string `json:"legacy_free,omitempty"`
}

// ReasonCannotTell is the reason of an Unknown condition, the writer's
// (internal/proof) and the view's for a stale one.
const ReasonCannotTell = "CannotTell"

// RowOf is n's row at now.
func RowOf(n Node, now time.Time) Row {
	a := n.Annotations
	r := Row{Node: n.Name, Planned: n.Labels[vocab.NodeLabelPlanned], Verified: a[vocab.NodeAnnotationVerifiedBackend], Mode: a[vocab.NodeAnnotationMode],
		Version: a[vocab.NodeAnnotationVersion], Source: a[vocab.NodeAnnotationDecisionSource], VerifiedAt: a[vocab.NodeAnnotationVerifiedAt], Age: "-",
		LegacyFree: a[vocab.NodeAnnotationLegacyFree]}
	if at, err := time.Parse(time.RFC3339, r.VerifiedAt); err == nil {
		r.Age = Age(now.Sub(at))
	}
	c := n.Condition
	if c == nil {
		return r
	}
	r.Problem, r.Reason, r.Message = c.Status, c.Reason, c.Message
	stale := ""
	if c.Heartbeat.IsZero() {
		stale = "cannot tell: the condition has no lastHeartbeatTime, so nothing says it is current"
	} else {
		age := now.Sub(c.Heartbeat)
		r.Heartbeat, r.HeartbeatAge = c.Heartbeat.UTC().Format(time.RFC3339), Age(age)
		if limit := n.StaleAfter(); age > limit {
			// check's words for a dead watch, which node-problem-detector
			// shows as Unknown on the same node.
			stale = fmt.Sprintf("stale status: the node's last heartbeat is %s old (over its stale-after %s); is %s running? systemctl status %s",
				age.Round(time.Second), limit, watchUnit, watchUnit)
		}
	}
	if stale != "" {
		r.Reported = c.Status
		r.Problem, r.Reason, r.Message = "Unknown", ReasonCannotTell, stale
	}
	return r
}

const watchUnit = "rke2-proxy-backend-watch"

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

// DefaultWidth is the terminal width the table fits when it cannot
// learn one.
const DefaultWidth = 80

// Cell caps in the narrow table: Kubernetes node names are mostly
// DNS labels (63), and a node's own annotations are short words unless
// something wrote them wrong.
const (
	maxNameCell  = 63
	maxValueCell = 24
	minMessage   = 10
	gap          = "   "
)

// Table is rows as kubectl-style columns fitting width (DefaultWidth when
// 0): each row's MESSAGE is cut with an ellipsis where the line would
// pass it (keeping at least minMessage of it), and overlong cells at
// their cap. wide adds MODE, VERSION, SOURCE, REASON and HEARTBEAT and
// cuts nothing (-o wide); wide also has LEGACY-FREE, the census's verdict
// word (yes, no, unknown; "-" where none ran). Empty cells print as "<none>"; every cell is
// oneLine'd.
func Table(rows []Row, width int, wide bool) string {
	if width <= 0 {
		width = DefaultWidth
	}
	header := []string{"NODE", "PLANNED", "VERIFIED", "PROBLEM", "AGE", "MESSAGE"}
	if wide {
		header = []string{"NODE", "PLANNED", "VERIFIED", "MODE", "VERSION", "SOURCE", "PROBLEM", "REASON", "HEARTBEAT", "LEGACY-FREE", "AGE", "MESSAGE"}
	}
	table := [][]string{header}
	for _, r := range rows {
		hb := r.HeartbeatAge
		if hb == "" {
			hb = "-"
		}
		line := []string{truncate(cell(r.Node), maxNameCell), cell(r.Planned), cell(r.Verified), cell(r.Problem), r.Age, cell(r.Message)}
		if wide {
			line = []string{cell(r.Node), cell(r.Planned), cell(r.Verified), cell(r.Mode), cell(r.Version), cell(r.Source),
				cell(r.Problem), cell(r.Reason), hb, legacyFreeCell(r.LegacyFree), r.Age, cell(r.Message)}
		} else {
			for i := 1; i < len(line)-1; i++ {
				line[i] = truncate(line[i], maxValueCell)
			}
		}
		table = append(table, line)
	}
	last := len(header) - 1
	widths := make([]int, last)
	used := 0
	for i := range widths {
		for _, line := range table {
			widths[i] = max(widths[i], utf8.RuneCountInString(line[i]))
		}
		used += widths[i] + len(gap)
	}
	var b strings.Builder
	for _, line := range table {
		for i, v := range line[:last] {
			b.WriteString(v + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(v)) + gap)
		}
		msg := line[last]
		if !wide {
			msg = truncate(msg, max(width-used, minMessage))
		}
		b.WriteString(msg + "\n")
	}
	return b.String()
}

// JSON is rows as -o json prints them: the values whole, the characters
// a terminal would obey escaped (jsonSafe).
func JSON(rows []Row) ([]byte, error) {
	if rows == nil {
		rows = []Row{}
	}
	b, err := json.MarshalIndent(struct {
		Nodes []Row `json:"nodes"`
	}{rows}, "", "  ")
	return append(jsonSafe(b), '\n'), err
}

func cell(v string) string {
	if v == "" {
		return "<none>"
	}
	return oneLine(v)
}

// legacyFreeCell is the census's verdict word, the part before its first
// ";" (the rest is in -o json), or "-" where the node published none.
func legacyFreeCell(v string) string {
	if v == "" {
		return "-"
	}
	word, _, _ := strings.Cut(v, ";")
	return cell(word)
}
