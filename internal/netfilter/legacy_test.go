package netfilter

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// fakeProc lays out /proc/net table lists under a fake root.
func fakeProc(t *testing.T, v4, v6 *string) hostfs.Root {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "proc/net"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]*string{"ip_tables_names": v4, "ip6_tables_names": v6} {
		if content != nil {
			if err := os.WriteFile(filepath.Join(dir, "proc/net", name), []byte(*content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return hostfs.New(dir)
}

func ptr(s string) *string { return &s }

func TestLegacyCallsOnePlainSavePerFamily(t *testing.T) {
	s := NewSystem(fakeProc(t, ptr("nat\nfilter\n"), ptr("")))
	var (
		mu    sync.Mutex
		calls []string
	)
	s.lookPath = func(name string) (string, error) { return "/sbin/" + name, nil }
	s.run = func(_ context.Context, path string, parse func(io.Reader)) (string, error) {
		mu.Lock()
		calls = append(calls, path)
		mu.Unlock()
		parse(strings.NewReader("*nat\n:PREROUTING ACCEPT [3:4]\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\nCOMMIT\n"))
		return "", nil
	}
	rs, err := s.Read(context.Background(), backend.IptablesLegacy)
	if err != nil {
		t.Fatal(err)
	}
	// ip6_tables_names is empty: no ip6tables-legacy-save call at all.
	if len(calls) != 1 || calls[0] != "/sbin/iptables-legacy-save" {
		t.Errorf("calls = %q, want exactly one iptables-legacy-save (no arguments)", calls)
	}
	if len(rs.Tables) != 1 || rs.Tables[0].Family != rules.IPv4 || rs.Tables[0].Chains[0].Rules[0].Jump != "KUBE-SERVICES" {
		t.Errorf("ruleset = %+v", rs)
	}
}

func TestLegacyNoTablesNoCalls(t *testing.T) {
	s := NewSystem(fakeProc(t, nil, nil))
	s.run = func(context.Context, string, func(io.Reader)) (string, error) {
		t.Error("a save tool ran although no legacy table exists")
		return "", nil
	}
	rs, err := s.Read(context.Background(), backend.IptablesLegacy)
	if err != nil || len(rs.Tables) != 0 || rs.Backend != backend.IptablesLegacy {
		t.Errorf("Read = %+v, %v; want an empty legacy ruleset", rs, err)
	}
}

func TestLegacyErrors(t *testing.T) {
	s := NewSystem(fakeProc(t, ptr("filter\n"), nil))
	s.lookPath = func(name string) (string, error) { return "", errors.New("executable file not found in $PATH") }
	_, err := s.Read(context.Background(), backend.IptablesLegacy)
	if !IsNotInstalled(err) || !strings.Contains(err.Error(), "reading iptables-legacy rules needs iptables-legacy-save, which is not installed (not found in PATH): install the Debian/Ubuntu package iptables (EL: iptables-legacy") {
		t.Errorf("missing tool: err = %v, want IsNotInstalled naming the tool, what needed it and its package", err)
	}

	s.lookPath = func(name string) (string, error) { return "/sbin/" + name, nil }
	s.run = func(_ context.Context, _ string, parse func(io.Reader)) (string, error) {
		parse(strings.NewReader(""))
		return "iptables-legacy-save v1.8.9 (legacy): Permission denied (you must be root)\n", errors.New("exit status 1")
	}
	_, err = s.Read(context.Background(), backend.IptablesLegacy)
	if !IsPermission(err) {
		t.Errorf("refused read: err = %v, want IsPermission", err)
	}

	s.run = func(_ context.Context, _ string, parse func(io.Reader)) (string, error) {
		parse(strings.NewReader("*filter\n-A NOPE -j DROP\nCOMMIT\n"))
		return "", nil
	}
	_, err = s.Read(context.Background(), backend.IptablesLegacy)
	if err == nil || !strings.Contains(err.Error(), `undeclared chain "NOPE"`) || !strings.Contains(err.Error(), "iptables-legacy-save") {
		t.Errorf("bad output: err = %v, want the parse error naming the tool", err)
	}
}

func TestUnknownBackend(t *testing.T) {
	if _, err := NewSystem(hostfs.New("/")).Read(context.Background(), "ipvs"); err == nil {
		t.Error("unknown backend accepted")
	}
}

func TestLegacyBothFamiliesInOrder(t *testing.T) {
	s := NewSystem(fakeProc(t, ptr("filter\n"), ptr("nat\n")))
	s.lookPath = func(name string) (string, error) { return "/sbin/" + name, nil }
	s.run = func(_ context.Context, path string, parse func(io.Reader)) (string, error) {
		table := "filter"
		if strings.Contains(path, "ip6tables") {
			table = "nat"
		}
		parse(strings.NewReader("*" + table + "\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n"))
		return "", nil
	}
	rs, err := s.Read(context.Background(), backend.IptablesLegacy)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs.Tables) != 2 || rs.Tables[0].Family != rules.IPv4 || rs.Tables[0].Name != "filter" || rs.Tables[1].Family != rules.IPv6 || rs.Tables[1].Name != "nat" {
		t.Errorf("tables = %+v, want ipv4 filter then ipv6 nat", rs.Tables)
	}
}
