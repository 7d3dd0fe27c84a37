package kmod

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/kmodtest"
)

const release = "6.1.0-test"

// fakeTree lays out a host root: loaded modules in proc/modules, built-ins
// in modules.builtin, loadable ones in modules.dep, and the fake modprobe.
func fakeTree(t *testing.T, loaded, builtin, loadable []string) hostfs.Root {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, content string, mode os.FileMode) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	var procModules, builtinList string
	for _, m := range loaded {
		procModules += m + " 16384 1 - Live 0x0000000000000000\n"
	}
	for _, m := range builtin {
		builtinList += "kernel/net/netfilter/" + m + ".ko\n"
	}
	write("proc/modules", procModules, 0o444)
	write("lib/modules/"+release+"/modules.builtin", builtinList, 0o644)
	var dep string
	for _, m := range loadable {
		dep += "kernel/net/netfilter/" + m + ".ko.xz:\n"
	}
	write("lib/modules/"+release+"/modules.dep", dep, 0o644)
	kmodtest.Install(t, dir, release)
	return hostfs.New(dir)
}

func calls(t *testing.T, root hostfs.Root) []string { return kmodtest.Calls(t, root.Dir()) }

func TestLoadSkipsLoadedAndBuiltinLoadsTheRestNamesMissing(t *testing.T) {
	root := fakeTree(t, []string{"nf_tables", "x_tables"}, []string{"nft_compat", "nf_conntrack"}, []string{"nft_chain_nat", "xt-comment"})
	state, err := ReadState(root, release)
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	l := Loader{Root: root, Log: func(f string, a ...any) { log = append(log, f) }}
	r := l.Load(context.Background(), state, []string{"nf_tables", "nft_compat", "nft_chain_nat", "xt_comment", "nft_counter"})

	if !reflect.DeepEqual(r.AlreadyLoaded, []string{"nf_tables"}) || !reflect.DeepEqual(r.Builtin, []string{"nft_compat"}) {
		t.Errorf("skipped loaded %v builtin %v", r.AlreadyLoaded, r.Builtin)
	}
	if !reflect.DeepEqual(r.Loaded, []string{"nft_chain_nat"}) {
		t.Errorf("loaded %v, want [nft_chain_nat]", r.Loaded)
	}
	// nft_counter is in no modules.dep line: not tried, not an error.
	if !reflect.DeepEqual(r.NotInKernel, []string{"nft_counter"}) {
		t.Errorf("not in kernel %v, want [nft_counter]", r.NotInKernel)
	}
	// xt_comment's file is xt-comment.ko.xz: available (the kernel treats
	// - and _ alike) but the fake modprobe does not, so it fails to load.
	if got := r.MissingNames(); !reflect.DeepEqual(got, []string{"nft_counter", "xt_comment"}) {
		t.Errorf("missing %v", got)
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "xt_comment (modprobe: FATAL: Module xt_comment not found") || strings.Contains(err.Error(), "nft_counter") {
		t.Errorf("Err() = %v, want it to name xt_comment with modprobe's message, and only it", err)
	}
	if got := calls(t, root); !reflect.DeepEqual(got, []string{"nft_chain_nat", "xt_comment"}) {
		t.Errorf("modprobe called for %v; loaded, built-in and absent modules must be skipped", got)
	}
	if len(log) != 4 {
		t.Errorf("%d log lines, want started+finished/failed per modprobe call: %q", len(log), log)
	}
	after, err := ReadState(root, release)
	if err != nil || !after.Present("nft_chain_nat") {
		t.Errorf("nft_chain_nat not in proc/modules after loading (%v)", err)
	}
}

// Loading a backend's set calls modprobe for that set only: an nft node
// must never get iptable_* loaded.
func TestLoadOnlyTheBackendsModules(t *testing.T) {
	all := append(append(backend.IptablesLegacy.Modules(), backend.IptablesNFT.Modules()...), backend.NFTables.Modules()...)
	root := fakeTree(t, nil, nil, all)
	state, err := ReadState(root, release)
	if err != nil {
		t.Fatal(err)
	}
	r := Loader{Root: root}.Load(context.Background(), state, backend.IptablesNFT.Modules())
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range calls(t, root) {
		if strings.HasPrefix(m, "iptable_") || strings.HasPrefix(m, "ip6table_") || m == "ip_tables" {
			t.Errorf("iptables-nft preload loaded legacy module %s", m)
		}
	}
	if got, want := len(r.Loaded), len(backend.IptablesNFT.Modules()); got != want {
		t.Errorf("loaded %d modules, want %d", got, want)
	}
}

func TestNoModuleSupport(t *testing.T) {
	root := fakeTree(t, nil, nil, []string{"nf_tables"})
	if err := os.Remove(filepath.Join(root.Dir(), "proc/modules")); err != nil {
		t.Fatal(err)
	}
	state, err := ReadState(root, release)
	if err != nil {
		t.Fatal(err)
	}
	r := Loader{Root: root}.Load(context.Background(), state, []string{"nf_tables"})
	if !r.NoModuleSupport || r.Err() != nil || calls(t, root) != nil {
		t.Errorf("without /proc/modules nothing may be tried: %+v calls %v", r, calls(t, root))
	}
}

func TestModprobeMissingBinary(t *testing.T) {
	root := fakeTree(t, nil, nil, []string{"nf_tables"})
	state, _ := ReadState(root, release)
	r := Loader{Root: root, Modprobe: "/nonexistent/modprobe"}.Load(context.Background(), state, []string{"nf_tables"})
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "nf_tables") {
		t.Errorf("Err() = %v, want a failure naming nf_tables", err)
	}
	// The failure says which binary is missing and what to install.
	want := "loading kernel module nf_tables needs " + root.Path("/nonexistent/modprobe") + ", which is not installed (not found there): install the Debian/Ubuntu package kmod (EL: kmod)"
	if len(r.Missing) != 1 || r.Missing[0].Error != want {
		t.Errorf("Missing = %+v, want one failure %q", r.Missing, want)
	}
}

func TestMissingFeatures(t *testing.T) {
	supported := State{Supported: true, Loaded: map[string]bool{}, Builtin: map[string]bool{}}
	withNF := State{Supported: true, Loaded: map[string]bool{"nf_tables": true, "nft_compat": true}, Builtin: map[string]bool{}}
	unsupported := State{Loaded: map[string]bool{}, Builtin: map[string]bool{}}
	cfg := func(kv ...string) map[string]facts.Tristate {
		m := map[string]facts.Tristate{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = facts.Tristate(kv[i+1])
		}
		return m
	}
	for _, c := range []struct {
		name string
		b    backend.Backend
		k    facts.Kernel
		s    State
		want string // substring of the only sentence, "" for none
	}{
		{"nft modules loaded", backend.IptablesNFT, facts.Kernel{Release: "6.1.0"}, withNF, ""},
		{"nf_tables off in config", backend.NFTables, facts.Kernel{Release: "4.4.302", Major: 4, Minor: 4, Config: cfg("NF_TABLES", "n")}, supported, "nftables: kernel 4.4.302 lacks nf_tables (CONFIG_NF_TABLES=n"},
		{"module that did not load", backend.NFTables, facts.Kernel{Config: cfg("NF_TABLES", "m")}, supported, "CONFIG_NF_TABLES=m"},
		{"built in by config", backend.IptablesLegacy, facts.Kernel{Config: cfg("IP_NF_IPTABLES", "y", "IP_NF_FILTER", "y", "IP_NF_NAT", "y", "IP_NF_MANGLE", "y")}, supported, ""},
		{"the nat table did not load", backend.IptablesLegacy, facts.Kernel{Config: cfg("IP_NF_IPTABLES", "y", "IP_NF_FILTER", "y", "IP_NF_NAT", "m", "IP_NF_MANGLE", "y")}, supported, "lacks legacy nat table (iptable_nat) (CONFIG_IP_NF_NAT=m"},
		{"no module support, no config", backend.IptablesLegacy, facts.Kernel{}, unsupported, ""},
		{"modules supported, nothing known, nothing loaded", backend.NFTables, facts.Kernel{}, supported, "nf_tables"},
		{"6.17 without the legacy gate", backend.IptablesLegacy, facts.Kernel{Release: "6.17.0", Major: 6, Minor: 17, Config: cfg("IP_NF_IPTABLES", "y", "IP_NF_FILTER", "y", "IP_NF_NAT", "y", "IP_NF_MANGLE", "y", "NETFILTER_XTABLES_LEGACY", "n")}, supported, "lacks legacy xtables, which iptables-legacy needs from kernel 6.17 on"},
		{"6.17 with the legacy gate", backend.IptablesLegacy, facts.Kernel{Major: 6, Minor: 17, Config: cfg("IP_NF_IPTABLES", "y", "IP_NF_FILTER", "y", "IP_NF_NAT", "y", "IP_NF_MANGLE", "y", "NETFILTER_XTABLES_LEGACY", "y")}, supported, ""},
	} {
		got := MissingFeatures(c.b, c.k, c.s)
		switch {
		case c.want == "" && len(got) != 0:
			t.Errorf("%s: missing %q, want none", c.name, got)
		case c.want != "" && (len(got) != 1 || !strings.Contains(got[0], c.want)):
			t.Errorf("%s: missing %q, want one naming %q", c.name, got, c.want)
		}
	}
}

func TestReadStateAliases(t *testing.T) {
	root := fakeTree(t, nil, nil, []string{"xt_MASQUERADE"})
	p := filepath.Join(root.Dir(), "lib/modules", release, "modules.alias")
	alias := "alias ipt_MASQUERADE xt_MASQUERADE\nalias pci:v00008086d*sv*sd*bc*sc*i* e1000e\n"
	if err := os.WriteFile(p, []byte(alias), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ReadState(root, release)
	if err != nil {
		t.Fatal(err)
	}
	if !s.AvailableKnown || !s.Available["ipt_MASQUERADE"] || !s.Available["xt_MASQUERADE"] || len(s.Available) != 2 {
		t.Errorf("available %v (known %v), want xt_MASQUERADE and its alias only", s.Available, s.AvailableKnown)
	}
}

func TestReadStateBadBuiltin(t *testing.T) {
	root := fakeTree(t, nil, nil, nil)
	p := filepath.Join(root.Dir(), "lib/modules", release, "modules.builtin")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(p, 0o755); err != nil { // a directory cannot be read as a file
		t.Fatal(err)
	}
	if _, err := ReadState(root, release); err == nil || !strings.Contains(err.Error(), "modules.builtin") {
		t.Errorf("ReadState = %v, want an error naming modules.builtin", err)
	}
}

// A module modprobe refused (the file is in the tree, the kernel will not
// take it) no longer counts as available after the preload; one never
// tried because modprobe is not installed is left to the module tree.
func TestAfterDropsRefusedModules(t *testing.T) {
	state := State{Supported: true, AvailableKnown: true, Available: map[string]bool{"nf_tables": true, "nft_compat": true}}
	r := Result{Missing: []Failure{{Module: "nf_tables", Error: "Exec format error"}, {Module: "nft_compat", Error: "not installed", noLoader: true}}}
	after := r.After(state)
	if after.Available["nf_tables"] || !after.Available["nft_compat"] {
		t.Errorf("after the preload: %v, want nf_tables gone and nft_compat kept", after.Available)
	}
	if !state.Available["nf_tables"] {
		t.Error("After changed the state it was given")
	}
	k := facts.Kernel{Release: release, Major: 6, Minor: 1, Config: map[string]facts.Tristate{"NF_TABLES": facts.Module, "NFT_COMPAT": facts.Module}}
	if missing := MissingFeatures(backend.NFTables, k, after); len(missing) == 0 {
		t.Error("nftables judged runnable with nf_tables refused by the kernel")
	}
}
