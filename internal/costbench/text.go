package costbench

import (
	"fmt"
	"io"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
)

// Write prints a bench run: with asJSON the bytes recorded (data, schema
// and all), else Text.
func Write(w io.Writer, rep bench.Report, data []byte, asJSON bool) error {
	if asJSON {
		_, err := w.Write(data)
		return err
	}
	_, err := io.WriteString(w, Text(rep))
	return err
}

// Text is bench's table for people: the size, kernel and loaders, then one
// line per backend with both steps, then why any was not measured.
func Text(rep bench.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d services (2 endpoints each, IPv4 and IPv6), kernel %s\n", rep.Services, rep.Kernel)
	for _, t := range rep.Tools {
		v := t.Version
		if v == "" {
			v = "unknown"
		}
		fmt.Fprintf(&b, "  %s: %s\n", t.Name, v)
	}
	fmt.Fprintf(&b, "\n%-16s %-28s %s\n", "backend", "full sync: wall (CPU)", "partial sync: wall (CPU)")
	for _, r := range rep.Results {
		full, _ := r.Step(bench.StepFull)
		part, _ := r.Step(bench.StepPartial)
		fmt.Fprintf(&b, "%-16s %-28s %s\n", r.Backend, stepText(full), stepText(part))
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(&b, "%-16s not measured: %s\n", s.Backend, s.Reason)
	}
	return b.String()
}

func stepText(s bench.Step) string {
	return fmt.Sprintf("%.3f s (%.3f s)", s.WallSeconds, s.UserSeconds+s.SysSeconds)
}
