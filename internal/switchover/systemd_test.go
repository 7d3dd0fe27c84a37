package switchover

import (
	"context"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

func TestSystemctlMissingNamesItsPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := UnitRestarter{Systemctl: Systemctl{Timeout: time.Second}, Unit: "rke2-server.service"}.Restart(context.Background())
	want := "switch (systemctl daemon-reload) needs systemctl, which is not installed (not found in PATH): install the Debian/Ubuntu package systemd (EL: systemd) (the generator must re-run for the new backend before rke2-server.service restarts)"
	check.MissingTool(t, "Restart", err, want)
}
