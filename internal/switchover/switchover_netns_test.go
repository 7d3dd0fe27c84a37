package switchover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cleanup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ownership"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/k3sgroup"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// loadKubeProxy loads kube-proxy's rendered rules for b, both families, the
// way kube-proxy's own restore does (a full table replace for iptables).
func loadKubeProxy(b backend.Backend) error {
	rs, err := expected.Render(expected.Options{Backend: b, Services: 3})
	if err != nil {
		return err
	}
	// The rendered footprint includes kubelet's hint and canary, which
	// kubelet, not kube-proxy, writes: simulatedRKE2 plays kubelet.
	for i := range rs.Tables {
		rs.Tables[i].Chains = slices.DeleteFunc(rs.Tables[i].Chains, func(c rules.Chain) bool { return ownership.IsKubeletHintChain(c.Name) })
	}
	for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
		if err := ruleload.Load(b, rs, fam); err != nil {
			return err
		}
	}
	return nil
}

// simulatedRKE2 stands in for systemctl restart, the one thing a test
// cannot run here: like RKE2's ExecStartPre it reads the operator config
// (the real file, through the real loader) and, like kube-proxy, writes
// its rules into the backend recorded there and leaves every other
// backend alone. A backend in broken never syncs; failRestart fails the
// restart itself.
type simulatedRKE2 struct {
	t           *testing.T
	root        hostfs.Root
	broken      map[backend.Backend]bool
	failRestart map[backend.Backend]bool
	restarts    []string
	// kubeletIn is the host's iptables alternative: kubelet writes its
	// chains there at every start ("" writes none).
	kubeletIn backend.Backend
	// k3s plays k3s: its flannel and kube-router write their chains at
	// every start through the iptables kube-proxy's backend says (k3s's
	// PATH, bin/aux's links), iptables-nft in nftables mode.
	k3s bool
}

// kubeletChains writes kubelet's chains into iptables backend b, both
// families, as kubelet does at its start: the hint in mangle, the canary
// in mangle, nat and filter (empty, nothing jumps to them), and the
// KUBE-FIREWALL it shares with kube-proxy (a rule, and a jump from INPUT).
func kubeletChains(b backend.Backend) error {
	flavour := strings.TrimPrefix(string(b), "iptables-")
	script := "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n" +
		"*nat\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n" +
		"*filter\n:KUBE-KUBELET-CANARY - [0:0]\n:KUBE-FIREWALL - [0:0]\n" +
		"-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment \"block incoming localnet connections\" -m conntrack ! --ctstate RELATED,ESTABLISHED,DNAT -j DROP\n" +
		"-A INPUT -j KUBE-FIREWALL\nCOMMIT\n"
	script6 := "*mangle\n:KUBE-IPTABLES-HINT - [0:0]\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n*nat\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n*filter\n:KUBE-KUBELET-CANARY - [0:0]\nCOMMIT\n"
	for tool, in := range map[string]string{"iptables-" + flavour + "-restore": script, "ip6tables-" + flavour + "-restore": script6} {
		cmd := exec.Command(tool, "-w", "5", "--noflush")
		cmd.Stdin = strings.NewReader(in)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubelet's chains with %s: %v: %s", tool, err, out)
		}
	}
	return nil
}

func (s *simulatedRKE2) Describe() string { return "rke2-server.service (simulated)" }

func (s *simulatedRKE2) Restart(context.Context, backend.Backend) error {
	cfg, err := config.Load(s.root, hostfs.ConfigFile, nil, nil)
	if err != nil {
		return err
	}
	b := backend.Backend(cfg.Backend)
	s.restarts = append(s.restarts, cfg.Backend)
	if s.failRestart[b] {
		return errors.New("Job for rke2-server.service failed")
	}
	if s.kubeletIn != "" {
		// kubelet starts before kube-proxy, and keeps running when
		// kube-proxy never syncs.
		if err := kubeletChains(s.kubeletIn); err != nil {
			return err
		}
	}
	if s.k3s {
		if err := k3sCompanions(b); err != nil {
			return err
		}
	}
	if s.broken[b] {
		return nil
	}
	return loadKubeProxy(b)
}

// k3sCompanions writes flannel's and kube-router's chains where they go
// while kube-proxy runs in b, unless they are there already (each ensures
// its rules, it does not add them twice).
func k3sCompanions(b backend.Backend) error {
	flavour := verify.HintBackend(b).IptablesMode()
	if out, _ := exec.Command("iptables-" + flavour + "-save").Output(); strings.Contains(string(out), ":FLANNEL-FWD") {
		return nil
	}
	cmd := exec.Command("iptables-"+flavour+"-restore", "-w", "5", "--noflush")
	cmd.Stdin = strings.NewReader(k3sgroup.Restore(k3sgroup.Flannel, k3sgroup.KubeRouter))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("flannel's and kube-router's chains in iptables-%s: %v: %s", flavour, err, out)
	}
	return nil
}

func owned(t *testing.T, b backend.Backend) ownership.Owned {
	t.Helper()
	rs, err := cleanup.Read(context.Background(), cleanup.Exec, b)
	if err != nil {
		t.Fatal(err)
	}
	return ownership.Find(rs, b == backend.NFTables)
}

func TestSwitchInNetns(t *testing.T) {
	const before = "# operator notes\nbackend: iptables-legacy # NAS kernel, see ticket 42\nverify:\n  wait: 2m\n"
	cases := []struct {
		name        string
		from, to    backend.Backend
		staleInTo   bool // rules of an earlier run already in the target
		broken      []backend.Backend
		failRestart []backend.Backend
		wantErr     string // "" success; "rolled back"; "needs a hand"
	}{
		{name: "legacy to nft", from: backend.IptablesLegacy, to: backend.IptablesNFT},
		{name: "nft to nftables over stale nftables rules", from: backend.IptablesNFT, to: backend.NFTables, staleInTo: true},
		{name: "never syncs: rollback", from: backend.IptablesLegacy, to: backend.NFTables, broken: []backend.Backend{backend.NFTables}, wantErr: "rolled back"},
		{name: "restart fails: rollback", from: backend.IptablesNFT, to: backend.IptablesLegacy, failRestart: []backend.Backend{backend.IptablesLegacy}, wantErr: "rolled back"},
		{name: "rollback fails too", from: backend.IptablesLegacy, to: backend.IptablesNFT, broken: []backend.Backend{backend.IptablesNFT}, failRestart: []backend.Backend{backend.IptablesLegacy}, wantErr: "needs a hand"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !nstest.InNetns(t) {
				return
			}
			cfgText := strings.Replace(before, "iptables-legacy", string(c.from), 1)
			root := rootWithConfig(t, cfgText, 0o640)
			if err := loadKubeProxy(c.from); err != nil {
				t.Fatal(err)
			}
			if c.staleInTo {
				if err := loadKubeProxy(c.to); err != nil {
					t.Fatal(err)
				}
			}
			rke2 := &simulatedRKE2{t: t, root: root, broken: set(c.broken), failRestart: set(c.failRestart)}
			var log bytes.Buffer
			s := &Switch{
				From: c.from, To: c.to,
				Config:    FileConfig{Root: root, File: hostfs.ConfigFile},
				Restarter: rke2,
				Verifier:  LiveVerifier{Root: hostfs.New("/"), Wait: 2 * time.Second, Poll: 100 * time.Millisecond},
				Cleaner:   LiveCleaner{},
				Hints:     LiveHints{},
				Journal:   switchjournal.File{Root: root},
				Log:       &log,
			}
			err := s.Run(context.Background())
			t.Logf("log:\n%s", log.String())
			got, rerr := os.ReadFile(root.Path(hostfs.ConfigFile))
			if rerr != nil {
				t.Fatal(rerr)
			}
			if root.Exists(hostfs.SwitchJournal) && c.wantErr != "needs a hand" {
				t.Errorf("the journal is left after the switch ended")
			}
			if fi, err := os.Stat(root.Path(hostfs.ConfigFile)); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("config mode changed: %v %v", fi.Mode(), err)
			}
			switch c.wantErr {
			case "":
				if err != nil {
					t.Fatal(err)
				}
				if want := strings.Replace(cfgText, string(c.from), string(c.to), 1); string(got) != want {
					t.Errorf("config is\n%s\nwant\n%s", got, want)
				}
				if o := owned(t, c.from); !o.Empty() {
					t.Errorf("kube-proxy objects left in the old backend %s: %+v", c.from, o)
				}
				if o := owned(t, c.to); o.Empty() {
					t.Errorf("no kube-proxy objects in the new backend %s", c.to)
				}
				for _, want := range []string{"op(1): [finished]", "op(7): [finished] verify"} {
					if !strings.Contains(log.String(), want) {
						t.Errorf("log lacks %q", want)
					}
				}
			case "rolled back":
				if !errors.Is(err, ErrRolledBack) {
					t.Fatalf("want a rollback, got %v", err)
				}
				if string(got) != cfgText {
					t.Errorf("config after rollback is\n%s\nwant the old\n%s", got, cfgText)
				}
				if o := owned(t, c.to); !o.Empty() {
					t.Errorf("kube-proxy objects left in the abandoned backend %s: %+v", c.to, o)
				}
				if o := owned(t, c.from); o.Empty() {
					t.Errorf("no kube-proxy objects in %s after the rollback", c.from)
				}
				if want := []string{string(c.to), string(c.from)}; fmt.Sprint(rke2.restarts) != fmt.Sprint(want) {
					t.Errorf("restarts read backends %v, want %v", rke2.restarts, want)
				}
				if !strings.Contains(log.String(), "[failed]") || !strings.Contains(log.String(), "rolling back to "+string(c.from)) {
					t.Errorf("log does not show the failure and the rollback")
				}
			default:
				if err == nil || errors.Is(err, ErrRolledBack) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("want %q, got %v", c.wantErr, err)
				}
			}
		})
	}
}

func set(bs []backend.Backend) map[backend.Backend]bool {
	m := map[backend.Backend]bool{}
	for _, b := range bs {
		m[b] = true
	}
	return m
}

// A config switch cannot edit in place stops the switch before the
// restart: the file, kube-proxy's rules and RKE2 are left as they were.
func TestSwitchStopsBeforeRestartWhenTheConfigCannotBeEdited(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	const flow = "{backend: iptables-legacy, node_label: true}\n"
	root := rootWithConfig(t, flow, 0o644)
	if err := loadKubeProxy(backend.IptablesLegacy); err != nil {
		t.Fatal(err)
	}
	rke2 := &simulatedRKE2{t: t, root: root}
	var log bytes.Buffer
	s := &Switch{
		From: backend.IptablesLegacy, To: backend.IptablesNFT,
		Config:    FileConfig{Root: root, File: hostfs.ConfigFile},
		Restarter: rke2,
		Verifier:  LiveVerifier{Root: hostfs.New("/"), Wait: time.Second, Poll: 100 * time.Millisecond},
		Cleaner:   LiveCleaner{},
		Hints:     LiveHints{},
		Journal:   switchjournal.File{Root: root},
		Log:       &log,
	}
	err := s.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("want a stop before any change, got %v", err)
	}
	if len(rke2.restarts) != 0 {
		t.Errorf("RKE2 was restarted %d time(s)", len(rke2.restarts))
	}
	if got, _ := os.ReadFile(root.Path(hostfs.ConfigFile)); string(got) != flow {
		t.Errorf("config changed to %q", got)
	}
	if o := owned(t, backend.IptablesLegacy); o.Empty() {
		t.Error("kube-proxy's live rules in iptables-legacy were removed")
	}
	if !strings.Contains(log.String(), "op(2): [failed]") || strings.Contains(log.String(), "op(3)") {
		t.Errorf("log:\n%s", log.String())
	}
}
