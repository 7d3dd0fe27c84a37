package hostfs

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Every helper binary the program runs has its package in the one table,
// so no command falls back to the vague "the package that provides".
func TestEveryToolHasItsPackage(t *testing.T) {
	for _, tool := range []string{
		IptablesLegacySave, Ip6tablesLegacySave, IptablesLegacyRestore, Ip6tablesLegacyRestore,
		IptablesNFTSave, Ip6tablesNFTSave, IptablesNFTRestore, Ip6tablesNFTRestore,
		NFT, Modprobe, Systemctl, "unshare", "iptables",
	} {
		hint := InstallHint(tool)
		if !strings.HasPrefix(hint, "install the Debian/Ubuntu package ") || !strings.Contains(hint, "(EL: ") {
			t.Errorf("%s: hint %q names no Debian and EL package", tool, hint)
		}
	}
	for tool, want := range map[string]string{
		IptablesLegacySave: "install the Debian/Ubuntu package iptables (EL: iptables-legacy, from EPEL on EL 9)",
		IptablesNFTRestore: "install the Debian/Ubuntu package iptables (EL: iptables-nft; EL 8: iptables)",
		NFT:                "install the Debian/Ubuntu package nftables (EL: nftables)",
		Modprobe:           "install the Debian/Ubuntu package kmod (EL: kmod)",
	} {
		if got := InstallHint(tool); got != want {
			t.Errorf("InstallHint(%s) = %q, want %q", tool, got, want)
		}
	}
}

func TestLookToolNamesToolPurposeAndPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := LookTool(NFT, "cleanup of nftables")
	want := "cleanup of nftables needs nft, which is not installed (not found in PATH): install the Debian/Ubuntu package nftables (EL: nftables)"
	if !IsMissingTool(err) || err.Error() != want {
		t.Errorf("LookTool = %v, want %q", err, want)
	}
}

// MissingTool recognises a binary that is not there, by name or by path,
// and leaves every other failure alone.
func TestMissingTool(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	byName := exec.Command(IptablesLegacySave).Run()
	if err := MissingTool(IptablesLegacySave, "cleanup", byName); !IsMissingTool(err) || !strings.Contains(err.Error(), "cleanup needs iptables-legacy-save") {
		t.Errorf("by name: %v", err)
	}
	absent := filepath.Join(t.TempDir(), "sbin", "modprobe")
	byPath := exec.Command(absent).Run()
	if err := MissingTool(absent, "loading kernel module x", byPath); !IsMissingTool(err) || !strings.Contains(err.Error(), "(not found there): install the Debian/Ubuntu package kmod") {
		t.Errorf("by path: %v", err)
	}
	failed := exec.Command("/bin/sh", "-c", "exit 3").Run()
	if err := MissingTool("/bin/sh", "x", failed); err != failed {
		t.Errorf("an exit status became %v", err)
	}
	if MissingTool(NFT, "x", nil) != nil {
		t.Error("nil became an error")
	}
}
