package switchover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
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

// A migration off ipvs on a fixture node: while RKE2's config still sets
// proxy-mode=ipvs, the switch prints the translation report and refuses,
// naming the item, before it writes anything; once the operator removed
// it (the plan still says ipvs), the dry run plans the migration with the
// sweep.
func TestDoMigratesOffIPVS(t *testing.T) {
	const ipvsPlan = `{"schema": 1, "drop_in": "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", "decision": {"backend": "iptables-nft", "proxy_mode": "ipvs", "iptables_mode": "nft", "source": "auto", "reasons": []}, "modules_loaded": []}`
	for _, pinned := range []bool{true, false} {
		h := testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1").File(hostfs.PlanFile, ipvsPlan)
		if !pinned {
			h.RKE2Config("config.yaml", "kube-proxy-arg:\n  - ipvs-scheduler=sh\n  - ipvs-strict-arp=true\n")
		}
		var out, log bytes.Buffer
		err := Do(context.Background(), Request{Root: hostfs.New(h.Dir()), ConfigFile: hostfs.ConfigFile, To: "nftables", DryRun: true, Timeout: time.Minute, Out: &out, Log: &log})
		t.Logf("pinned %v: %v\n%s%s", pinned, err, &out, &log)
		if !strings.Contains(out.String(), "switch: migrating off ipvs: kube-proxy runs ipvs mode over iptables-nft's iptables; after the switch it runs nftables mode on nftables") ||
			!strings.Contains(out.String(), `kube-proxy-arg "ipvs-scheduler=sh": nftables mode has no hashing scheduler`) {
			t.Errorf("pinned %v: no translation report:\n%s", pinned, &out)
		}
		var u *UsageError
		if pinned {
			if !errors.As(err, &u) || !strings.Contains(err.Error(), `kube-proxy-arg item "proxy-mode=ipvs"), the mode kube-proxy would come back in after the restart`) {
				t.Errorf("pinned: %v", err)
			}
			if !strings.Contains(out.String(), `"proxy-mode=ipvs": kube-proxy must run nftables mode`) {
				t.Errorf("the report does not name proxy-mode=ipvs:\n%s", &out)
			}
			continue
		}
		if err != nil {
			t.Fatalf("unpinned: %v", err)
		}
		if !strings.Contains(out.String(), "remove what ipvs mode left: its chains in both iptables backends") || !strings.Contains(out.String(), "remove kube-proxy's rules from iptables-nft") {
			t.Errorf("the dry run does not plan the sweep:\n%s", &out)
		}
		if h.Root().Exists(hostfs.SwitchJournal) {
			t.Error("the dry run wrote a journal")
		}
	}
	// -o json: one document with the report as records and the refusal.
	h := testhost.New(t).IPVSNodeOn("v1.36.3+rke2r1").File(hostfs.PlanFile, ipvsPlan)
	var out bytes.Buffer
	err := Do(context.Background(), Request{Root: hostfs.New(h.Dir()), ConfigFile: hostfs.ConfigFile, To: "nftables", DryRun: true, Timeout: time.Minute, Out: &out, Log: io.Discard, JSON: true})
	var doc JSONOutcome
	if jerr := json.Unmarshal(out.Bytes(), &doc); jerr != nil {
		t.Fatalf("-o json: %v\n%s", jerr, &out)
	}
	var u *UsageError
	if !errors.As(err, &u) || !doc.Refused || !strings.Contains(doc.Error, "remove that item") || len(doc.IPVSTranslation) != 2 ||
		doc.IPVSTranslation[1].Arg != "ipvs-scheduler=sh" || doc.IPVSTranslation[1].Line != 2 || !strings.Contains(doc.IPVSTranslation[1].Becomes, "sessionAffinity: ClientIP") {
		t.Errorf("-o json: %v\n%s", err, &out)
	}
}
