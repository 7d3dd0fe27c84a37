package facts

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

// IPFamilies returns the IP families kube-proxy programs on this node,
// decided as kube-proxy's platformCheckSupported (cmd/kube-proxy/app/
// server_linux.go, 1.34-1.37) does: IPv6 only when /proc/net/if_inet6
// exists (absent with ipv6.disable=1) and net.ipv6.conf.all.disable_ipv6 is
// not 1. reason says why a family is missing ("" when both are there).
// A file that exists but cannot be read is an error: guessing would either
// fail a healthy single-stack node or miss a missing IPv6 table.
func IPFamilies(root hostfs.Root) (fams []rules.Family, reason string, err error) {
	both := []rules.Family{rules.IPv4, rules.IPv6}
	v4 := []rules.Family{rules.IPv4}
	if _, err := root.Stat(hostfs.IfInet6); errors.Is(err, fs.ErrNotExist) {
		return v4, hostfs.IfInet6 + " is absent (kernel without IPv6 or ipv6.disable=1)", nil
	} else if err != nil {
		return nil, "", fmt.Errorf("%s: %w; check that /proc is mounted", hostfs.IfInet6, err)
	}
	b, err := root.ReadFile(hostfs.IPv6DisableAll)
	if errors.Is(err, fs.ErrNotExist) {
		return both, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w; check that /proc/sys is mounted", hostfs.IPv6DisableAll, err)
	}
	if strings.TrimSpace(string(b)) == "1" {
		return v4, hostfs.IPv6DisableAll + " is 1", nil
	}
	return both, "", nil
}
