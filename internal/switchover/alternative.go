package switchover

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// hostAlternative is where the host's iptables alternative points
// ("legacy", "nft", "" unknown), read when asked: the operator moves it
// before a switch, and a rollback leaves it. nil on k3s, whose kubelet
// writes its hint chains with k3s's own PATH iptables, not the host's.
func (r Request) hostAlternative() func() string {
	if r.distro.Kind.Profile().KubeProxyEmbedded {
		return nil
	}
	return func() string { return facts.IptablesAlternative(r.Root) }
}

// alternativeGap says why a node whose host iptables points at alt fails
// verify with kube-proxy on b, and the commands that fix it; "" when it
// fits b or is unknown. kubelet writes its hint chains with the host's
// iptables at every start, so verify reports [kubelet-hint] there for as
// long as it stays.
func alternativeGap(alt string, b backend.Backend, unit string) string {
	want := verify.HintBackend(b)
	if alt != "legacy" && alt != "nft" || alt == want.IptablesMode() {
		return ""
	}
	return fmt.Sprintf("the host's iptables alternative points at iptables-%s while kube-proxy uses %s, so kubelet writes its hint chains in iptables-%s and verify fails ([kubelet-hint]); fix: %s; systemctl restart %s; rke2-proxy-backend cleanup --kubelet-hints",
		alt, b, alt, alternativeCommand(want), unit)
}

// alternativeCommand points the host's iptables and ip6tables at b.
func alternativeCommand(b backend.Backend) string {
	return fmt.Sprintf("update-alternatives --set iptables /usr/sbin/%s; update-alternatives --set ip6tables /usr/sbin/ip6%s", b, strings.TrimPrefix(string(b), "ip"))
}

// alternativeWarnings are what a switch from s.From to s.To says before it
// starts: the host's alternative that does not fit To (move it first), or
// one that was moved already and would not fit From after a rollback.
func (s *Switch) alternativeWarnings() []string {
	if s.Alternative == nil {
		return nil
	}
	alt := s.Alternative()
	if alternativeGap(alt, s.To, "") != "" {
		want := verify.HintBackend(s.To)
		return []string{fmt.Sprintf("warning: the host's iptables alternative points at iptables-%s, and kubelet writes its hint chains with it: after the switch verify fails ([kubelet-hint]) until it points at %s; move it first: %s",
			alt, want, alternativeCommand(want))}
	}
	if alternativeGap(alt, s.From, "") != "" {
		want := verify.HintBackend(s.From)
		return []string{fmt.Sprintf("note: the host's iptables alternative points at iptables-%s: should the switch roll back to %s, verify fails ([kubelet-hint]) until it points back: %s",
			alt, s.From, alternativeCommand(want))}
	}
	return nil
}
