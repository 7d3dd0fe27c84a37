package facts

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

func TestProbeHostServices(t *testing.T) {
	h := testhost.New(t).
		File("/usr/lib/systemd/system/firewalld.service", "[Unit]\n").
		File(FirewalldConf, "# comment\nFlushAllOnReload=no\nFlushAllOnReload=yes\n").
		File(UfwConf, "# /etc/ufw/ufw.conf\nENABLED=yes\nLOGLEVEL=low\n").
		File(NMConfDir+"/rke2-canal.conf", "[keyfile]\nunmanaged-devices=interface-name:cali*;interface-name:flannel*\n")
	h.Symlink("/etc/systemd/system/multi-user.target.wants/firewalld.service", "/usr/lib/systemd/system/firewalld.service")
	h.Symlink("/etc/systemd/system/timers.target.wants/nm-cloud-setup.timer", "/usr/lib/systemd/system/nm-cloud-setup.timer")
	if f := Probe(h.Root(), Options{}); len(f.HostServices.Enabled) != 0 || f.HostServices.UfwEnabled {
		t.Errorf("read without being asked (the generator does not): %+v", f.HostServices)
	}
	f := Probe(h.Root(), Options{HostServices: true})
	s := f.HostServices
	if !slices.Equal(s.Enabled, []string{"firewalld.service", "nm-cloud-setup.timer"}) {
		t.Errorf("enabled %q", s.Enabled)
	}
	if s.FirewalldFlushAllOnReload != "yes" || !s.UfwEnabled || !slices.Equal(s.NMUnmanaged, []string{"cali*", "flannel*"}) {
		t.Errorf("services %+v", s)
	}
}

func TestProbeHostServicesQuietHost(t *testing.T) {
	f := Probe(testhost.New(t).File(UfwConf, "ENABLED=no\n").Root(), Options{HostServices: true})
	s := f.HostServices
	if len(s.Enabled) != 0 || s.UfwEnabled || s.FirewalldFlushAllOnReload != "" || len(s.NMUnmanaged) != 0 {
		t.Errorf("quiet host reads as %+v", s)
	}
}

const dpkgStatus = `Package: iptables
Status: install ok installed
Version: 1.8.4-3ubuntu2

Package: nftables-doc
Status: install ok installed
Version: 9.9.9-1

Package: nftables
Status: deinstall ok config-files
Version: 0.9.3-2

Package: libnftables1
Status: install ok installed
Version: 1:1.0.6-2+deb12u2
`

func TestDpkgInstalledVersion(t *testing.T) {
	data := []byte(dpkgStatus)
	for name, want := range map[string]string{"iptables": "1.8.4", "nftables": "", "libnftables1": "1.0.6", "absent": ""} {
		if got := DpkgInstalledVersion(data, name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestProbeToolVersions(t *testing.T) {
	h := testhost.New(t).File(DpkgStatus, dpkgStatus+"\nPackage: nftables\nStatus: install ok installed\nVersion: 0.9.3-2\n").
		Executable("/usr/sbin/nft", "#!/bin/sh\necho 'nftables v1.0.9 (Old Doc Yak #3)'\n")
	if f := Probe(h.Root(), Options{}); f.Userspace.Nft.Version != "" {
		t.Errorf("read without being asked: %+v", f.Userspace.Nft)
	}
	f := Probe(h.Root(), Options{ToolVersions: true})
	if f.Userspace.Nft.Version != "0.9.3" || f.Userspace.Iptables.Version != "1.8.4" || f.Userspace.Nft.Source != "/var/lib/dpkg/status (package nftables)" {
		t.Errorf("dpkg versions %+v %+v", f.Userspace.Nft, f.Userspace.Iptables)
	}
	f = Probe(h.Root(), Options{ToolVersions: true, AskNft: true})
	if f.Userspace.Nft.Version != "1.0.9" || f.Userspace.Nft.Source != "/usr/sbin/nft --version" {
		t.Errorf("asked version %+v", f.Userspace.Nft)
	}
}

func TestVersionBelow(t *testing.T) {
	for _, c := range []struct {
		v    string
		want bool
	}{{"0.9.3", true}, {"1.0.0", true}, {"1.0.1", false}, {"1.0.6rc1", false}, {"1.1", false}, {"", false}, {"x.y", false}} {
		if got := VersionBelow(c.v, 1, 0, 1); got != c.want {
			t.Errorf("VersionBelow(%q, 1.0.1) = %v", c.v, got)
		}
	}
}

func FuzzDpkgInstalledVersion(f *testing.F) {
	f.Add([]byte(dpkgStatus), "iptables", uint8(1), "1.8.7", "1ubuntu5", true, true)
	f.Add([]byte(dpkgStatus), "nftables", uint8(0), "1.0.6", "", false, false)
	f.Fuzz(func(t *testing.T, data []byte, name string, epoch uint8, upstream, revision string, installed, first bool) {
		DpkgInstalledVersion(data, name)
		UnmanagedPatterns(string(data))
		shellKey(string(data), name)
		VersionBelow(name, 1, 8, 5)

		// Round trip: a stanza written the way dpkg writes it, for a
		// version [epoch:]upstream[-revision], among the other packages of
		// a real status file, first or last, reads back as upstream when
		// installed and as nothing otherwise.
		if !dpkgWord(name, "+-.") || !dpkgWord(upstream, "+.~") || revision != "" && !dpkgWord(revision, "+.~") || strings.Contains(dpkgStatus, "Package: "+name+"\n") {
			return
		}
		version := upstream
		if epoch > 0 {
			version = fmt.Sprintf("%d:%s", epoch, version)
		}
		if revision != "" {
			version += "-" + revision
		}
		status := "deinstall ok config-files"
		want := ""
		if installed {
			status, want = "install ok installed", upstream
		}
		stanza := "Package: " + name + "\nStatus: " + status + "\nPriority: optional\nVersion: " + version + "\nDescription: x\n"
		file := dpkgStatus + "\n" + stanza
		if first {
			file = stanza + "\n" + dpkgStatus
		}
		if got := DpkgInstalledVersion([]byte(file), name); got != want {
			t.Fatalf("package %q version %q (installed %v): read %q, want %q", name, version, installed, got, want)
		}
	})
}

// dpkgWord reports whether s is a non-empty run of lower-case letters,
// digits and the extra characters, starting with a letter or digit (the
// shape of package names and version parts).
func dpkgWord(s, extra string) bool {
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && strings.ContainsRune(extra, c)
		if !ok {
			return false
		}
	}
	return s != ""
}
