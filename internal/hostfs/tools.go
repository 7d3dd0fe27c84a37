package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// What to install when a helper binary is missing: one table for every
// command, so each error names the same package. Keyed by the binary's
// base name (Modprobe is a path). Debian and Ubuntu put every iptables
// flavour in one package; EL splits them (iptables-nft owns the nft
// flavour on EL 9+ and Fedora, EL 8's single iptables package has only
// nft's; iptables-legacy is Fedora's, on EL 9 from EPEL).
// A list the linker lays out, not a map: the generator links this package,
// and a map would be built at every boot's start.
var toolPackages = []struct{ tool, debian, el string }{
	{IptablesLegacySave, "iptables", "iptables-legacy, from EPEL on EL 9"},
	{Ip6tablesLegacySave, "iptables", "iptables-legacy, from EPEL on EL 9"},
	{IptablesLegacyRestore, "iptables", "iptables-legacy, from EPEL on EL 9"},
	{Ip6tablesLegacyRestore, "iptables", "iptables-legacy, from EPEL on EL 9"},
	{IptablesNFTSave, "iptables", "iptables-nft; EL 8: iptables"},
	{Ip6tablesNFTSave, "iptables", "iptables-nft; EL 8: iptables"},
	{IptablesNFTRestore, "iptables", "iptables-nft; EL 8: iptables"},
	{Ip6tablesNFTRestore, "iptables", "iptables-nft; EL 8: iptables"},
	{"iptables", "iptables", "iptables-nft; EL 8: iptables"},
	{NFT, "nftables", "nftables"},
	{"modprobe", "kmod", "kmod"},
	{Systemctl, "systemd", "systemd"},
	{"unshare", "util-linux", "util-linux"},
}

// InstallHint says what to install for tool (a name or a path).
func InstallHint(tool string) string {
	for _, p := range toolPackages {
		if p.tool == filepath.Base(tool) {
			return fmt.Sprintf("install the Debian/Ubuntu package %s (EL: %s)", p.debian, p.el)
		}
	}
	return "install the package that provides " + filepath.Base(tool)
}

// MissingToolError says a helper binary is not installed: which one, what
// needed it, and the package that provides it.
type MissingToolError struct {
	// Tool is the binary's name (looked up in PATH) or its host path.
	Tool string
	// For says what needed it, e.g. "reading iptables-legacy rules".
	For string
	Err error
}

func (e *MissingToolError) Error() string {
	where := "in PATH"
	if filepath.IsAbs(e.Tool) {
		where = "there"
	}
	return fmt.Sprintf("%s needs %s, which is not installed (not found %s): %s", e.For, e.Tool, where, InstallHint(e.Tool))
}

func (e *MissingToolError) Unwrap() error { return e.Err }

// IsMissingTool reports whether err says a helper binary is missing.
func IsMissingTool(err error) bool {
	var e *MissingToolError
	return errors.As(err, &e)
}

// LookTool finds tool in PATH; a missing one is a *MissingToolError that
// says what needed it (forWhat).
func LookTool(tool, forWhat string) (string, error) {
	p, err := exec.LookPath(tool)
	if err != nil {
		return "", &MissingToolError{Tool: tool, For: forWhat, Err: err}
	}
	return p, nil
}

// MissingTool turns the error of starting tool into a *MissingToolError
// when it says the binary is not there (not in PATH, or no such file at
// its path), and returns err unchanged otherwise.
func MissingTool(tool, forWhat string, err error) error {
	if err == nil || IsMissingTool(err) {
		return err
	}
	if errors.Is(err, exec.ErrNotFound) {
		return &MissingToolError{Tool: tool, For: forWhat, Err: err}
	}
	// ENOENT from exec also means a missing ELF interpreter: only a tool
	// whose file is not there is missing.
	var pathErr *fs.PathError
	if errors.As(err, &pathErr) && errors.Is(pathErr.Err, fs.ErrNotExist) && filepath.IsAbs(tool) {
		if _, statErr := os.Lstat(tool); errors.Is(statErr, fs.ErrNotExist) {
			return &MissingToolError{Tool: tool, For: forWhat, Err: err}
		}
	}
	return err
}
