package testhost

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"os"
	"path"
	"strings"
)

// UnitCurrent is RKE2's rke2-server.service as shipped by current releases
// (rancher/rke2 bundle/lib/systemd/system, with the ExecCondition that
// refuses to start while the agent runs). The agent unit is the same text
// with "server" and "agent" swapped (see UnitText); units/rke2-agent.service
// is RKE2's own (bundle/lib/systemd/system at rancher/rke2 6ce1a80, 2026),
// which the cloud-init boot test installs and a test holds UnitText to.
//
// The text lives in units/rke2-server.service so the shell tests (the nspawn
// boot test, the generator benchmark) install the very same file.
//
//go:embed units/rke2-server.service
var UnitCurrent string

// UnitLegacy is rke2-server.service as older releases shipped it (until
// rancher/rke2 920bd0b, 2025): Conflicts= and the nm-cloud-setup check.
//
//go:embed units/rke2-server.legacy.service
var UnitLegacy string

// UnitText turns a server unit text (UnitCurrent, UnitLegacy) into role's
// unit: RKE2's agent unit differs from the server's only by the two words.
func UnitText(serverText, role string) string {
	if role == "agent" {
		return strings.NewReplacer("server", "agent", "agent", "server").Replace(serverText)
	}
	return serverText
}

// RKE2Unit installs rke2-<role>.service the way an install method does:
//   - "tarball": install.sh default, units in /usr/local/lib/systemd/system,
//     binary /usr/local/bin/rke2, plus the tarball's rke2-<role>.env;
//   - "opt": install.sh with prefix /opt/rke2 (read-only /usr): its sed
//     rewrites the first /usr/local on each line to /opt/rke2 and moves the
//     unit to /etc/systemd/system;
//   - "rpm": rancher/rke2-packaging's spec seds /usr/local/bin to /usr/bin and
//     /usr/local/lib/systemd/system to the unit dir, installs the unit in
//     /usr/lib/systemd/system and ships /etc/sysconfig/rke2-<role>.
//
// text is the server unit text (default UnitCurrent); it is adapted to the
// role and the layout.
func (h *Host) RKE2Unit(layout, role string, text ...string) *Host {
	h.t.Helper()
	if role != "server" && role != "agent" {
		h.t.Fatalf("testhost: RKE2Unit role %q: want server or agent", role)
	}
	unit := UnitCurrent
	if len(text) > 0 {
		unit = text[0]
	}
	unit = UnitText(unit, role)
	name := "rke2-" + role
	switch layout {
	case "tarball":
		h.File("/usr/local/lib/systemd/system/"+name+".service", unit)
		h.File("/usr/local/lib/systemd/system/"+name+".env", "HOME=/root\n")
		return h.File("/usr/local/bin/rke2", "#!fake rke2\n")
	case "opt":
		h.File("/etc/systemd/system/"+name+".service", replaceFirstPerLine(unit, "/usr/local", "/opt/rke2"))
		h.File("/opt/rke2/lib/systemd/system/"+name+".env", "HOME=/root\n")
		return h.File("/opt/rke2/bin/rke2", "#!fake rke2\n")
	case "rpm":
		h.File("/usr/lib/systemd/system/"+name+".service", replaceFirstPerLine(unit, "/usr/local", "/usr"))
		h.File("/etc/sysconfig/"+name, "HOME=/root\n")
		return h.File("/usr/bin/rke2", "#!fake rke2\n")
	}
	h.t.Fatalf("testhost: RKE2Unit layout %q: want tarball, opt or rpm", layout)
	return h
}

// replaceFirstPerLine is sed's s|old|new| (no g flag).
func replaceFirstPerLine(text, old, new string) string {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.Replace(l, old, new, 1)
	}
	return strings.Join(lines, "\n")
}

// RKE2Version lays out what RKE2 leaves after its first start with version
// v (e.g. "v1.31.2+rke2r1"): /var/lib/rancher/rke2/data/<tag>-<12 hex>/bin,
// where the tag is the runtime image tag (v1.31.2-rke2r1), and the
// /var/lib/rancher/rke2/bin symlink to it.
func (h *Host) RKE2Version(v string) *Host {
	h.t.Helper()
	sum := sha256.Sum256([]byte("index.docker.io/rancher/rke2-runtime:" + v))
	dataDir := "/var/lib/rancher/rke2/data/" + strings.ReplaceAll(v, "+", "-") + "-" + hex.EncodeToString(sum[:])[:12]
	h.File(dataDir+"/bin/kubectl", "#!fake kubectl\n")
	h.File(dataDir+"/.extracted", "")
	return h.Symlink("/var/lib/rancher/rke2/bin", dataDir+"/bin")
}

// RKE2Config writes an RKE2 config file; a relative path is taken under
// /etc/rancher/rke2 ("config.yaml", "config.yaml.d/50-rancher.yaml").
func (h *Host) RKE2Config(relPath, yaml string) *Host {
	h.t.Helper()
	if !path.IsAbs(relPath) {
		relPath = path.Join("/etc/rancher/rke2", relPath)
	}
	return h.File(relPath, yaml)
}

// Executable writes script at hostPath with mode 0755, e.g. a fake rke2.
func (h *Host) Executable(hostPath, script string) *Host {
	h.t.Helper()
	h.write(hostPath, []byte(script))
	if err := os.Chmod(h.path(hostPath), 0o755); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return h
}

// RKE2Binary makes hostPath (e.g. /usr/local/bin/rke2) answer --version
// the way RKE2 does for version v ("v1.31.2+rke2r1").
func (h *Host) RKE2Binary(hostPath, v string) *Host {
	h.t.Helper()
	return h.Executable(hostPath, "#!/bin/sh\n[ \"$1\" = --version ] || exit 1\n"+
		"echo 'rke2 version "+v+" (0123abcd)'\necho 'go version go1.23.6 X:boringcrypto'\n")
}
