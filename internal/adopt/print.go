package adopt

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// Print writes what adopt found and did: the result as one JSON document
// (with dry_run beside it), or as the lines an operator reads.
func Print(w io.Writer, res Result, dryRun, asJSON bool) error {
	if asJSON {
		out := struct {
			Result
			DryRun bool `json:"dry_run"`
		}{res, dryRun}
		data, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return fmt.Errorf("encode output: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	}
	if res.Outcome != Adopted {
		if res.Outcome == "" {
			return nil // failed before judging; the error says why
		}
		_, err := fmt.Fprintf(w, "adopt: %s: %s\n", res.Outcome, res.Message)
		return err
	}
	p := res.Plan
	verb := "recorded"
	if dryRun {
		verb = "would record"
	}
	name := res.Distribution.Name()
	fmt.Fprintf(w, "adopt: kube-proxy runs on %s (under %s); %s it as this boot's plan in %s (source %s), without restarting %s\n",
		p.Decision.Backend, res.Unit, verb, hostfs.PlanFile, p.Decision.Source, name)
	for _, r := range p.Decision.Reasons {
		fmt.Fprintf(w, "  - %s\n", r)
	}
	if res.NextStart != nil && len(res.Differences) == 0 {
		fmt.Fprintf(w, "adopt: %s's next start and the next boot keep %s (source %s)\n", name, res.NextStart.Backend, res.NextStart.Source)
	}
	for _, warn := range p.Warnings {
		fmt.Fprintf(w, "adopt: warning: %s\n", warn)
	}
	if dryRun {
		_, err := fmt.Fprintf(w, "adopt: dry run: nothing written, systemd not touched (a real run: daemon-reload, start %s and %s)\n", units.VerifyUnit, units.WatchUnit)
		return err
	}
	_, err := fmt.Fprintf(w, "adopt: done: %s\n", strings.Join(res.Actions, "; "))
	return err
}
