package apply

import (
	"context"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
)

// A broken operator config stops apply before any trial, saying RKE2 will
// not start; RKE2_CONFIG_FILE is read from apply's own environment.
func TestOnHostRefusesWhatItCannotRead(t *testing.T) {
	t.Run("operator config", func(t *testing.T) {
		h := debianHost(t).File(hostfs.ConfigFile, "backnd: auto\n")
		ft := &fakeTrial{}
		_, err := OnHost(context.Background(), hostplan.Host{Root: h.Root()}, PrepareOptions{TrialUnderRoot: true, Trial: ft.trial})
		if err == nil || !strings.Contains(err.Error(), "backnd") || !strings.Contains(err.Error(), "RKE2 will not start until this is fixed") || len(ft.asked) != 0 {
			t.Errorf("error %v after trials %v; want the key named, the unknown intent said, no trial", err, ft.asked)
		}
	})
	t.Run("RKE2_CONFIG_FILE", func(t *testing.T) {
		const moved = "/etc/rke2-elsewhere/config.yaml"
		h := debianHost(t).File(moved, "kube-proxy-arg: [unclosed\n")
		t.Setenv("RKE2_CONFIG_FILE", moved)
		ft := &fakeTrial{}
		_, err := OnHost(context.Background(), hostplan.Host{Root: h.Root()}, PrepareOptions{TrialUnderRoot: true, Trial: ft.trial})
		if err == nil || !strings.HasPrefix(err.Error(), "RKE2_CONFIG_FILE="+moved+": ") || len(ft.asked) != 0 {
			t.Errorf("error %v after trials %v; want one naming RKE2_CONFIG_FILE and no trial", err, ft.asked)
		}
	})
}
