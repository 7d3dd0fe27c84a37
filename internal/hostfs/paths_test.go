package hostfs

import (
	"path"
	"slices"
	"strings"
	"testing"
)

// Every host path must be absolute and clean: Root.Path cleans what it is
// given, so "/run//x" would still work but be printed differently in
// messages and golden files than where it is actually written.
func TestHostPathsAreAbsoluteAndClean(t *testing.T) {
	paths := []string{
		Binary, ShippedUnitDir, ConfigFile, TextfileDir,
		RunDir, PlanFile, StatusFile, WatchHeartbeat, Modprobe,
		RKE2ConfigFile, RKE2DataDir, InitrdRelease, SystemdContainer,
		Kmsg, ProcCmdline, Proc1Cmdline, Proc1Environ, KernelOSRelease,
		ProcModules, ModulesDir, ProcConfigGz, IPTablesNames, IP6TablesNames, IPVSConntrack,
		PCIDevicesDir, DMIDir, SysBusDir,
	}
	paths = append(paths, IptablesCommands...)
	paths = append(paths, UnitSearchDirs...)
	paths = append(paths, RKE2EnvFiles...)
	paths = append(paths, KernelConfigFiles("6.1.0-18-amd64")...)
	for _, p := range paths {
		if !path.IsAbs(p) || path.Clean(p) != p {
			t.Errorf("%q is not an absolute clean path", p)
		}
	}
}

// The save/restore tools are looked up in PATH unless a packager links in
// an absolute path; either way they name one flavour, never the plain
// iptables-save that follows the host's alternative.
func TestToolsNameTheirFlavour(t *testing.T) {
	for tool, flavour := range map[string]string{
		IptablesLegacySave: "legacy", Ip6tablesLegacySave: "legacy",
		IptablesLegacyRestore: "legacy", Ip6tablesLegacyRestore: "legacy",
		IptablesNFTSave: "nft", Ip6tablesNFTSave: "nft",
		IptablesNFTRestore: "nft", Ip6tablesNFTRestore: "nft",
	} {
		if !strings.Contains(path.Base(tool), "-"+flavour+"-") {
			t.Errorf("%q does not name the %s flavour", tool, flavour)
		}
	}
}

func TestKernelConfigFilesWithoutRelease(t *testing.T) {
	got := KernelConfigFiles("")
	want := []string{ProcConfigGz, "/usr/src/linux/.config"}
	if !slices.Equal(got, want) {
		t.Errorf("KernelConfigFiles(\"\") = %q, want %q", got, want)
	}
	for _, p := range got {
		if !slices.Contains(KernelConfigFiles("6.1.0"), p) {
			t.Errorf("%s is not among the candidates for a known release", p)
		}
	}
}
