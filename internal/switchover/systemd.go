package switchover

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// RKE2Units are RKE2's two units; a node runs one of them.
var RKE2Units = []string{"rke2-server.service", "rke2-agent.service"}

// Systemctl runs systemctl through boundexec: a restart that hangs (an
// ExecStartPre stuck, a notify that never comes) is ended at Timeout.
type Systemctl struct {
	Timeout time.Duration
}

// run runs systemctl args and returns its exit status (-1 when it could
// not run or was killed).
func (s Systemctl) run(ctx context.Context, args ...string) (int, error) {
	res, err := boundexec.Run(ctx, boundexec.Command{
		Argv:      append([]string{hostfs.Systemctl}, args...),
		Env:       []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SYSTEMD_PAGER=", "LANG=C"},
		Timeout:   s.Timeout,
		MaxOutput: 64 << 10,
	})
	if err := hostfs.MissingTool(hostfs.Systemctl, "switch (systemctl "+strings.Join(args, " ")+")", err); hostfs.IsMissingTool(err) {
		return -1, err
	}
	var exit interface{ ExitCode() int }
	if errors.As(err, &exit) {
		return exit.ExitCode(), fmt.Errorf("%s %s: %w: %s", hostfs.Systemctl, strings.Join(args, " "), err, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return -1, fmt.Errorf("%s %s: %w", hostfs.Systemctl, strings.Join(args, " "), err)
	}
	return 0, nil
}

// FindUnit picks the RKE2 unit to restart: the active one, else the one
// whose unit file is installed; both or neither installed is an error,
// because restarting the wrong one would change nothing.
func FindUnit(ctx context.Context, root hostfs.Root, isActive func(ctx context.Context, unit string) bool) (string, error) {
	for _, u := range RKE2Units {
		if isActive(ctx, u) {
			return u, nil
		}
	}
	var installed []string
	for _, u := range RKE2Units {
		for _, dir := range hostfs.UnitSearchDirs {
			if root.Exists(filepath.Join(dir, u)) {
				installed = append(installed, u)
				break
			}
		}
	}
	switch len(installed) {
	case 1:
		return installed[0], nil
	case 0:
		return "", fmt.Errorf("neither %s is active or installed (looked in %s): install RKE2 first", strings.Join(RKE2Units, " nor "), strings.Join(hostfs.UnitSearchDirs, ", "))
	}
	return "", fmt.Errorf("both %s are installed and neither is active: start the one this node runs, then switch again", strings.Join(RKE2Units, " and "))
}

// IsActive asks systemd whether unit is active (is-active exits 0).
func (s Systemctl) IsActive(ctx context.Context, unit string) bool {
	code, _ := s.run(ctx, "is-active", "--quiet", unit)
	return code == 0
}

// UnitRestarter restarts one RKE2 unit. RKE2's units are Type=notify, so
// systemctl restart returns once RKE2 says it is ready (or failed).
type UnitRestarter struct {
	Systemctl Systemctl
	Unit      string
}

func (r UnitRestarter) Describe() string { return r.Unit }

// Restart reloads systemd first: the generator wrote RKE2's drop-in at boot
// with the backend decided then (apply --backend=...), and apply keeps that
// plan, so a restart without a daemon-reload would start kube-proxy on the
// old backend again (the boot test's switch scenario caught this).
func (r UnitRestarter) Restart(ctx context.Context) error {
	if _, err := r.Systemctl.run(ctx, "daemon-reload"); err != nil {
		return fmt.Errorf("%w (the generator must re-run for the new backend before %s restarts)", err, r.Unit)
	}
	if _, err := r.Systemctl.run(ctx, "restart", r.Unit); err != nil {
		return fmt.Errorf("%w (see journalctl -u %s)", err, r.Unit)
	}
	return nil
}

// VerifyUnitRerunner restarts the verify unit. It is Type=oneshot, so
// systemctl restart returns once that verify has finished, with its
// outcome; a run still waiting (pulled in by the RKE2 restart) is stopped
// and started over.
type VerifyUnitRerunner struct {
	Systemctl Systemctl
}

func (v VerifyUnitRerunner) Describe() string { return units.VerifyUnit }

func (v VerifyUnitRerunner) Rerun(ctx context.Context) error {
	_, err := v.Systemctl.run(ctx, "restart", units.VerifyUnit)
	return err
}
