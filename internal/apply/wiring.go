package apply

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// The generator wires apply into RKE2's units without a backend and
// without Wants= verify when the operator config was broken at its run
// (units.Input.Undecided). Once the config is fixed RKE2 starts again by
// itself (its units have Restart=always) with that same drop-in, since
// nothing re-ran the generator: apply decides itself, but nothing would
// pull verify in until the next daemon-reload or boot. CompleteWiring
// closes that gap from inside the RKE2 unit's ExecStartPre.

// RKE2UnitOf returns the RKE2 unit whose cgroup a process is in, from the
// text of its /proc/PID/cgroup ("" when none): only apply run by an RKE2
// unit itself (its ExecStartPre runs in the unit's cgroup) completes the
// wiring, never a hand run or one from another unit (cloud-init's).
func RKE2UnitOf(cgroup string) string {
	sc := bufio.NewScanner(strings.NewReader(cgroup))
	for sc.Scan() {
		// "0::/system.slice/rke2-server.service" (v2) or
		// "1:name=systemd:/system.slice/rke2-server.service" (v1)
		line := sc.Text()
		i := strings.LastIndex(line, "/")
		if i < 0 {
			continue
		}
		switch u := line[i+1:]; u {
		case "rke2-server.service", "rke2-agent.service":
			return u
		}
	}
	return ""
}

// OwnRKE2Unit reads this process's cgroup (the kernel's, whatever --root;
// bounded like every read on the boot path, though the kernel writes a
// line per hierarchy).
func OwnRKE2Unit() string {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return ""
	}
	return RKE2UnitOf(string(data))
}

// CompleteWiring queues a start of the verify unit. --no-block is what
// makes this safe from ExecStartPre: the verify unit is ordered After= the
// RKE2 units, so its job waits for this very start to finish, and a
// blocking start would wait for itself. No daemon-reload here: reloading
// systemd from inside a unit's start is not something to do on a boot
// path; the next daemon-reload or boot writes the decided drop-in.
func CompleteWiring(ctx context.Context, systemctl string, log func(format string, args ...any)) error {
	if systemctl == "" {
		systemctl = hostfs.Systemctl
	}
	what := fmt.Sprintf("%s start --no-block %s", systemctl, units.VerifyUnit)
	log("[started]  %s (the generator wired apply without a decision: the operator config was broken when it ran; run `systemctl daemon-reload` to wire the decision)", what)
	res, err := boundexec.Run(ctx, boundexec.Command{
		Argv:      []string{systemctl, "start", "--no-block", units.VerifyUnit},
		Env:       []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SYSTEMD_PAGER=", "LANG=C"},
		Timeout:   30 * time.Second,
		MaxOutput: 16 << 10,
	})
	if err != nil {
		log("[failed]   %s: %v: %s", what, err, strings.TrimSpace(res.Stderr))
		return fmt.Errorf("%s: %w", what, err)
	}
	log("[finished] %s", what)
	return nil
}
