package netfilter

import (
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kmod/presence"
)

// A reader must not load the backend it reads (DOMAIN.md section 4: load
// only the chosen backend's set). Asking nfnetlink about nf_tables, by a
// dump, a generation request or joining NFNLGRP_NFTABLES, makes the kernel
// load nf_tables (request_module("nfnetlink-subsys-10")), and the socket
// itself loads nfnetlink: verify and watch did that on every legacy node
// (issue 30's VM tier, arm64 with a device-tree trigger). While nf_tables
// is neither loaded nor built in no nftables rule can exist, so the
// readers answer "no rules" without asking. Legacy is read the same way:
// only the tables /proc/net/ip*_tables_names lists are asked about.

// NFTablesAbsent says why no nftables rule (iptables-nft's or native
// nftables') can exist in root's running kernel now, "" when some may
// (see presence.Absent: when the files cannot tell, the kernel is asked).
func NFTablesAbsent(root hostfs.Root) string {
	return presence.Absent(root, "nf_tables")
}

// NotLoadedNote is how a reader's caller says a backend held no rules
// because its kernel part is not there.
const NotLoadedNote = "nf_tables not loaded"

// NotLoaded says, for a backend stored in nf_tables, that s answers "no
// rules" without asking the kernel (NotLoadedNote; "" when it asks).
func (s *System) NotLoaded(b backend.Backend) string {
	if b == backend.IptablesLegacy || NFTablesAbsent(s.Root) == "" {
		return ""
	}
	return NotLoadedNote
}

// hostRoot is the running system's root: the package-level readers read
// the kernel of the caller's network namespace, which is the host's.
var hostRoot = hostfs.New("/")
