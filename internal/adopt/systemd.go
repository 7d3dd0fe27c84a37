package adopt

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Systemd is the little of systemd adoption uses. There is deliberately no
// restart and no stop: adoption must never touch RKE2's units or what runs.
type Systemd interface {
	IsActive(ctx context.Context, unit string) bool
	IsEnabled(ctx context.Context, unit string) bool
	DaemonReload(ctx context.Context) error
	// StartNoBlock queues a start job and returns (verify is a oneshot
	// that may wait minutes for kube-proxy).
	StartNoBlock(ctx context.Context, unit string) error
}

// Systemctl runs systemctl through boundexec, so a systemd that does not
// answer cannot hang a package's postinst.
type Systemctl struct {
	// Path is systemctl's path (hostfs.Systemctl when empty, looked up in
	// PATH); tests point it at a recording script.
	Path    string
	Timeout time.Duration
}

// DefaultSystemctlTimeout bounds each systemctl call; a daemon-reload on
// a busy node takes seconds.
const DefaultSystemctlTimeout = 60 * time.Second

func (s Systemctl) run(ctx context.Context, args ...string) error {
	path := s.Path
	if path == "" {
		path = hostfs.Systemctl
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultSystemctlTimeout
	}
	res, err := boundexec.Run(ctx, boundexec.Command{
		Argv:      append([]string{path}, args...),
		Env:       []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SYSTEMD_PAGER=", "LANG=C"},
		Timeout:   timeout,
		MaxOutput: 64 << 10,
	})
	if err != nil {
		msg := strings.TrimSpace(res.Stderr)
		if msg != "" {
			return fmt.Errorf("%s %s: %w: %s", path, strings.Join(args, " "), err, msg)
		}
		return fmt.Errorf("%s %s: %w", path, strings.Join(args, " "), err)
	}
	return nil
}

func (s Systemctl) IsActive(ctx context.Context, unit string) bool {
	return s.run(ctx, "is-active", "--quiet", unit) == nil
}

func (s Systemctl) IsEnabled(ctx context.Context, unit string) bool {
	return s.run(ctx, "is-enabled", "--quiet", unit) == nil
}

func (s Systemctl) DaemonReload(ctx context.Context) error { return s.run(ctx, "daemon-reload") }

func (s Systemctl) StartNoBlock(ctx context.Context, unit string) error {
	return s.run(ctx, "start", "--no-block", unit)
}
