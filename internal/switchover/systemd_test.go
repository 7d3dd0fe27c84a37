package switchover

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/check"
)

func TestSystemctlMissingNamesItsPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := UnitRestarter{Systemctl: Systemctl{Timeout: time.Second}, Unit: "rke2-server.service"}.Restart(context.Background(), "iptables-nft")
	want := "switch (systemctl daemon-reload) needs systemctl, which is not installed (not found in PATH): install the Debian/Ubuntu package systemd (EL: systemd) (the generator must re-run before rke2-server.service restarts: no host to compare the generated drop-ins of)"
	check.MissingTool(t, "Restart", err, want)
}

// TestActiveAsksOnce: which of RKE2's units runs is one systemctl show
// for them all, read block by block in the order asked, as systemd prints
// it (a blank line between units); a failing systemctl is none active.
func TestActiveAsksOnce(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := filepath.Join(dir, "systemctl")
	write(t, script, `#!/bin/sh
echo "$*" >>`+calls+`
[ -e `+dir+`/broken ] && exit 1
[ "$1 $2 $3 $4" = "show -p ActiveState --" ] || exit 1
shift 4
sep=
for u; do
	printf "$sep"; sep='\n'
	case "$u" in
	rke2-agent.service) echo ActiveState=active ;;
	k3s.service) echo ActiveState=reloading ;;
	*) echo ActiveState=inactive ;;
	esac
done
`, 0o755)
	sc := Systemctl{Path: script, Timeout: 5 * time.Second}
	got := sc.Active(context.Background(), "rke2-server.service", "rke2-agent.service", "k3s.service", "k3s-agent.service")
	want := map[string]bool{"rke2-agent.service": true, "k3s.service": true}
	if !maps.Equal(got, want) {
		t.Errorf("Active = %v, want %v", got, want)
	}
	if data, _ := os.ReadFile(calls); string(data) != "show -p ActiveState -- rke2-server.service rke2-agent.service k3s.service k3s-agent.service\n" {
		t.Errorf("systemctl calls:\n%s", data)
	}
	write(t, filepath.Join(dir, "broken"), "", 0o644)
	if got := sc.Active(context.Background(), "rke2-agent.service"); len(got) != 0 {
		t.Errorf("a failing systemctl: Active = %v, want none", got)
	}
}
