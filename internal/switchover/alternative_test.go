package switchover

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/switchjournal"
)

// An alternative fits kube-proxy's backend when it is the flavour kubelet's
// hints belong in; an unknown one says nothing.
func TestAlternativeGap(t *testing.T) {
	for _, c := range []struct {
		alt  string
		b    backend.Backend
		want string
	}{
		{"legacy", backend.IptablesLegacy, ""},
		{"nft", backend.IptablesNFT, ""},
		{"nft", backend.NFTables, ""},
		{"", backend.IptablesNFT, ""},
		{"unknown", backend.IptablesLegacy, ""},
		{"nft", backend.IptablesLegacy, "update-alternatives --set iptables /usr/sbin/iptables-legacy; update-alternatives --set ip6tables /usr/sbin/ip6tables-legacy; systemctl restart u; rke2-proxy-backend cleanup --kubelet-hints"},
		{"legacy", backend.NFTables, "update-alternatives --set iptables /usr/sbin/iptables-nft; update-alternatives --set ip6tables /usr/sbin/ip6tables-nft"},
	} {
		got := alternativeGap(c.alt, c.b, "u")
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("alternativeGap(%q, %s) = %q, want %q in it", c.alt, c.b, got, c.want)
		}
	}
}

// A switch (with its fakes) whose steps all hold on a host whose
// alternative fits neither end: the switch is done and says the node still
// fails; asked to roll back, the rollback is done and says the same; the
// dry run warned first. Nothing of it is a rollback of the switch itself.
func TestSwitchSaysTheNodeStillFails(t *testing.T) {
	n := newNode(t)
	var log bytes.Buffer
	s := n.switcher(switchjournal.File{Root: n.root}, nil, &log)
	s.Alternative = func() string { return "legacy" }
	if w := s.alternativeWarnings(); len(w) != 1 || !strings.HasPrefix(w[0], "warning: the host's iptables alternative points at iptables-legacy") {
		t.Errorf("warnings before the switch: %q", w)
	}
	err := s.Run(context.Background())
	if !errors.Is(err, ErrStillFailing) || errors.Is(err, ErrRolledBack) || !strings.Contains(err.Error(), "switched: kube-proxy uses iptables-nft, but the node still fails verify: the host's iptables alternative points at iptables-legacy") {
		t.Fatalf("switch: %v\n%s", err, &log)
	}
	n.ends(t, switchedConfig, &log)

	// The operator moved the alternative, and now wants the old backend
	// back (a journal as a kill -9 at the verify step leaves it).
	n2 := newNode(t)
	s2 := n2.switcher(switchjournal.File{Root: n2.root}, nil, &log)
	s2.Alternative = func() string { return "nft" }
	j := &switchjournal.Journal{Schema: switchjournal.Schema, From: backend.IptablesLegacy, To: backend.IptablesNFT, Phase: switchjournal.PhaseSwitch, Step: "verify"}
	if j.Config, err = s2.Config.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := s2.Config.Set(j.Config, backend.IptablesNFT); err != nil {
		t.Fatal(err)
	}
	err = s2.Rollback(context.Background(), j)
	if !errors.Is(err, ErrStillFailing) || !strings.Contains(err.Error(), "rolled back: kube-proxy uses iptables-legacy and the config is the original, but the node still fails verify") ||
		!strings.Contains(err.Error(), "update-alternatives --set iptables /usr/sbin/iptables-legacy") {
		t.Fatalf("rollback: %v\n%s", err, &log)
	}
	n2.ends(t, originalConfig, &log)
}
