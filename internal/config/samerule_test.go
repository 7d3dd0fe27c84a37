package config

import (
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2/dropin"
)

// FuzzExtraArgRendersWhenAccepted holds config validation and the drop-in
// renderer to one rule: an extra arg the config accepts (so detect and the
// generator plan with it) must never be refused later by apply's renderer.
func FuzzExtraArgRendersWhenAccepted(f *testing.F) {
	for _, seed := range []string{
		"iptables-min-sync-period=1s", "v=\t2", "v=2\x7f", "v=2\u0085", "v=\uFFFD", "--v=2",
		"a=1\nb=2", "v=\xff", "feature-gates=Foo=true", "log_dir=/tmp", "x=" + string(rune(0x9f)),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		v, err := checkExtraArg(arg)
		if err != nil {
			return
		}
		if _, err := dropin.Render(rke2.DropIn{Backend: backend.IptablesNFT, KubeProxyArgs: []string{v}}); err != nil {
			t.Fatalf("config accepts %q (as %q) but the drop-in renderer refuses it: %v", arg, v, err)
		}
	})
}
