package costbench

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/bench"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// StepTimeout ends a loader that runs away: iptables-nft-restore at 10,000
// services takes minutes on some kernels, which is a result, but an hour
// is a hung process.
const StepTimeout = 15 * time.Minute

var families = []rules.Family{rules.IPv4, rules.IPv6}

// Measure runs both steps for backend b at n services in the current
// network namespace, which must be a fresh one (the caller's duty: see
// RunIsolated). It writes one progress line per step to progress.
func Measure(ctx context.Context, b backend.Backend, n int, progress io.Writer) (bench.Result, error) {
	fp, err := newFootprint(b, n)
	if err != nil {
		return bench.Result{}, err
	}
	res := bench.Result{Backend: b}
	for _, step := range []struct {
		name string
		text func(rules.Family) string
		what string
	}{
		{bench.StepFull, func(f rules.Family) string { return rules.FormatFamily(fp.before, f) }, fmt.Sprintf("full sync of %d services", n)},
		{bench.StepPartial, func(f rules.Family) string { return partialText(fp, f) }, "partial sync, one endpoint moved"},
	} {
		s := bench.Step{Step: step.name}
		for _, fam := range families {
			text := step.text(fam)
			if err := load(ctx, b, fam, text, &s); err != nil {
				return res, fmt.Errorf("%s %s: %w", b, step.name, err)
			}
		}
		res.Steps = append(res.Steps, s)
		fmt.Fprintf(progress, "bench: %s: %s: %.3f s wall, %.3f s CPU (user %.3f, sys %.3f), %d rules\n",
			b, step.what, s.WallSeconds, s.UserSeconds+s.SysSeconds, s.UserSeconds, s.SysSeconds, s.Rules)
	}
	return res, nil
}

// load feeds text to the backend's loader for one family, exactly one
// process (one restore, one nft transaction), and adds its wall time and
// rusage to s.
func load(ctx context.Context, b backend.Backend, fam rules.Family, text string, s *bench.Step) error {
	argv := ruleload.Argv(b, fam)
	ctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(text)
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("%s (%s): %w: %s", strings.Join(argv, " "), fam, err, strings.TrimSpace(stderr.String()))
	}
	s.WallSeconds += wall.Seconds()
	s.UserSeconds += cmd.ProcessState.UserTime().Seconds()
	s.SysSeconds += cmd.ProcessState.SystemTime().Seconds()
	s.Rules += countRules(text)
	return nil
}

func countRules(text string) int {
	n := 0
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "-A ") || strings.HasPrefix(l, "add rule ") {
			n++
		}
	}
	return n
}
