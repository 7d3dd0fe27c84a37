package switchover

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// Do's errors are the command's exit codes: a *UsageError is exit 2 (the
// request is wrong), anything else exit 1 (the node is). Each case is
// refused before the lock is taken or anything is written.
func TestDoRefusesBeforeAnyChange(t *testing.T) {
	const unfinishedJournal = `{"schema": 1, "from": "iptables-legacy", "to": "iptables-nft", "phase": "rollback", "step": "wait", "reason": "x",
 "config": {"path": "/etc/rke2-proxy-backend/config.yaml", "existed": false}, "owner": {"pid": 0, "start": 0, "boot": ""}}`
	cases := []struct {
		name    string
		r       Request
		journal string
		usage   bool
		want    string
	}{
		{"both finishes", Request{Resume: true, Rollback: true}, "", true, "--resume and --rollback: choose one"},
		{"dry finish", Request{Resume: true, DryRun: true}, "", true, "--dry-run goes with --to: the journal says what --resume or --rollback would do (" + hostfs.SwitchJournal + ")"},
		{"no target", Request{}, "", true, "--to is required: one of "},
		{"not a backend", Request{To: "off"}, "", true, "(switch needs a backend; auto and off are config choices, set them in " + hostfs.ConfigFile + ")"},
		{"no time", Request{To: "iptables-nft"}, "", true, "--timeout 0s: must be positive"},
		{"bad journal", Request{To: "iptables-nft", DryRun: true, Timeout: time.Minute}, `{"schema": 2}`, true, "schema 2, but this rke2-proxy-backend reads schema 1 only"},
		{"unfinished", Request{To: "iptables-nft", DryRun: true, Timeout: time.Minute}, unfinishedJournal, false,
			"an unfinished switch from iptables-legacy to iptables-nft stopped at step wait of its rollback (" + hostfs.SwitchJournal + "; its process 0 is gone): run `rke2-proxy-backend switch --resume`"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.journal != "" {
				p := filepath.Join(dir, hostfs.SwitchJournal)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c.journal), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var out, log bytes.Buffer
			c.r.Root, c.r.ConfigFile, c.r.Out, c.r.Log = hostfs.New(dir), hostfs.ConfigFile, &out, &log
			err := Do(context.Background(), c.r)
			var u *UsageError
			if err == nil || errors.As(err, &u) != c.usage || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (usage error: %v), want %q (usage error: %v)", err, errors.As(err, &u), c.want, c.usage)
			}
			if out.Len() > 0 || log.Len() > 0 {
				t.Errorf("said something before refusing:\n%s%s", &out, &log)
			}
			if _, err := os.Stat(filepath.Join(dir, apply.LockFile)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the lock file was written: %v", err)
			}
		})
	}
}
