package switchover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// Systemctl runs systemctl through boundexec: a restart that hangs (an
// ExecStartPre stuck, a notify that never comes) is ended at Timeout.
type Systemctl struct {
	// Path is the systemctl to run: hostfs.Systemctl (from PATH) on the
	// host, the fixture's own under --root (SystemctlUnder).
	Path    string
	Timeout time.Duration
	// missing, set under a --root without a systemctl, is every run's
	// error (a dry run still plans with the fixture's unit files).
	missing error
}

// SystemctlUnder is the systemctl for root: the running host's from PATH
// when root is "/", else the root's own /usr/bin/systemctl or
// /bin/systemctl. A fixture root must never restart this machine's RKE2:
// --root means for switch what it means for every command, that the host
// is the one under it; a fixture without a systemctl cannot be switched.
func SystemctlUnder(root hostfs.Root, timeout time.Duration) (Systemctl, error) {
	if root.IsHost() {
		return Systemctl{Path: hostfs.Systemctl, Timeout: timeout}, nil
	}
	for _, p := range []string{"/usr/bin/systemctl", "/bin/systemctl"} {
		r, err := root.Resolve(p)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(r); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return Systemctl{Path: r, Timeout: timeout}, nil
		}
	}
	err := fmt.Errorf("no systemctl under --root %s (usr/bin/systemctl or bin/systemctl): under --root, switch restarts the RKE2 of that root through its own systemctl, never this machine's", root.Dir())
	return Systemctl{Timeout: timeout, missing: err}, err
}

func (s Systemctl) path() string {
	if s.Path == "" {
		return hostfs.Systemctl
	}
	return s.Path
}

// run runs systemctl args and returns its exit status (-1 when it could
// not run or was killed).
func (s Systemctl) run(ctx context.Context, args ...string) (int, error) {
	_, code, err := s.output(ctx, args...)
	return code, err
}

// output is run with systemctl's stdout.
func (s Systemctl) output(ctx context.Context, args ...string) (string, int, error) {
	res, code, err := s.result(ctx, args...)
	return res.Stdout, code, err
}

// result is run with what boundexec says of the run (its output, its CPU).
func (s Systemctl) result(ctx context.Context, args ...string) (boundexec.Result, int, error) {
	if s.missing != nil {
		return boundexec.Result{}, -1, s.missing
	}
	res, err := boundexec.Run(ctx, boundexec.Command{
		Argv:      append([]string{s.path()}, args...),
		Env:       []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SYSTEMD_PAGER=", "LANG=C"},
		Timeout:   s.Timeout,
		MaxOutput: 64 << 10,
	})
	if err := hostfs.MissingTool(hostfs.Systemctl, "switch (systemctl "+strings.Join(args, " ")+")", err); hostfs.IsMissingTool(err) {
		return res, -1, err
	}
	var exit interface{ ExitCode() int }
	if errors.As(err, &exit) {
		return res, exit.ExitCode(), fmt.Errorf("%s %s: %w: %s", s.path(), strings.Join(args, " "), err, strings.TrimSpace(res.Stderr))
	}
	if err != nil {
		return boundexec.Result{}, -1, fmt.Errorf("%s %s: %w", s.path(), strings.Join(args, " "), err)
	}
	return res, 0, nil
}

// FindUnit picks d's unit to restart (distro.Find says which
// distribution the node runs, RKE2 before a stray k3s unit): the active
// one, else the one whose unit file is installed; several or none
// installed is an error, because restarting the wrong one would change
// nothing. On RKE2 both of its units are asked, installed or not where
// distro looks (an active unit is the one that runs).
func FindUnit(ctx context.Context, d distro.Distro, isActive func(ctx context.Context, unit string) bool) (string, error) {
	installed := d.UnitNames()
	asked := installed
	if fixed := d.Kind.Profile().Units; fixed != nil {
		asked = fixed
	}
	for _, u := range asked {
		if isActive(ctx, u) {
			return u, nil
		}
	}
	switch len(installed) {
	case 1:
		return installed[0], nil
	case 0:
		return "", fmt.Errorf("neither %s is active or installed (looked in %s), nor a k3s unit: install RKE2 or k3s first", strings.Join(distro.RKE2.Profile().Units, " nor "), strings.Join(hostfs.UnitSearchDirs, ", "))
	}
	return "", fmt.Errorf("%s are installed and none is active: start the one this node runs, then switch again", strings.Join(installed, " and "))
}

// Active asks systemd once which of units are active, as is-active
// counts them (active, reloading, refreshing): one systemctl show for them
// all, not one is-active each. A unit systemd does not know is inactive;
// when systemctl fails, none is active, as is-active then says.
func (s Systemctl) Active(ctx context.Context, units ...string) map[string]bool {
	out, _, err := s.output(ctx, append([]string{"show", "-p", "ActiveState", "--"}, units...)...)
	active := map[string]bool{}
	if err != nil {
		return active
	}
	// One block per unit, in the order asked, blank lines between.
	for i, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
		if i >= len(units) {
			break
		}
		switch strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(block), "ActiveState=")) {
		case "active", "reloading", "refreshing":
			active[units[i]] = true
		}
	}
	return active
}

// UnitRestarter restarts one RKE2 unit. RKE2's units are Type=notify, so
// systemctl restart returns once RKE2 says it is ready (or failed).
type UnitRestarter struct {
	Systemctl Systemctl
	Unit      string
	// Root, when set, is the host whose generated drop-ins decide whether
	// the restart needs a daemon-reload first (reloadNeeded); nil always
	// reloads.
	Root *hostfs.Root
	// Log gets one line when the reload is left out (nil: no line).
	Log io.Writer
}

func (r UnitRestarter) Describe() string { return r.Unit }

// Restart reloads systemd first: the generator wrote RKE2's drop-in at boot
// with the backend decided then (apply --backend=...), and apply keeps that
// plan, so a restart without a daemon-reload would start kube-proxy on the
// old backend again (the boot test's switch scenario caught this). A
// switch onto another backend always changes that drop-in; the reload is
// left out only when the generator would write what is there already (a
// migration off ipvs on the same backend, the second restart after an
// apply by hand), because it reruns every generator and reloads every unit
// file on the node.
func (r UnitRestarter) Restart(ctx context.Context, b backend.Backend) error {
	why := "no host to compare the generated drop-ins of"
	if r.Root != nil {
		why = reloadNeeded(*r.Root, r.Unit, b)
	}
	if why == "" && r.Log != nil {
		fmt.Fprintf(r.Log, "rke2-proxy-backend: switch: no daemon-reload: the generator would write the drop-ins %s has already\n", r.Unit)
	}
	if why != "" {
		if err := r.call(ctx, ": "+why, "daemon-reload"); err != nil {
			return fmt.Errorf("%w (the generator must re-run before %s restarts: %s)", err, r.Unit, why)
		}
	}
	if err := r.call(ctx, "", "restart", r.Unit); err != nil {
		return fmt.Errorf("%w (see journalctl -u %s)", err, r.Unit)
	}
	return nil
}

// call runs systemctl args and logs what it took, wall and CPU (systemctl's
// and, under the fake of the tests, what it runs): on a node the restart
// is RKE2's start, seconds the switch only waits for.
func (r UnitRestarter) call(ctx context.Context, note string, args ...string) error {
	start := time.Now()
	res, _, err := r.Systemctl.result(ctx, args...)
	if r.Log != nil {
		fmt.Fprintf(r.Log, "rke2-proxy-backend: switch: systemctl %s took %s (%s CPU)%s\n", strings.Join(args, " "), roundTook(time.Since(start)), roundTook(res.CPU), note)
	}
	return err
}

// roundTook keeps a duration readable: tenths of a millisecond below a
// second, hundredths of a second above.
func roundTook(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Millisecond)
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
