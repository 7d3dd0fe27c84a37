package ipset

import (
	"errors"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nlsock"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"golang.org/x/sys/unix"
)

// parseListT reads `ipset list -t`'s text: the tool's own view of the
// same kernel state, which the reader must equal.
func parseListT(t *testing.T, out string) []Set {
	t.Helper()
	var sets []Set
	for _, block := range strings.Split(strings.TrimSpace(out), "\n\n") {
		if strings.TrimSpace(block) == "" {
			continue
		}
		var s Set
		for _, line := range strings.Split(block, "\n") {
			k, v, _ := strings.Cut(line, ": ")
			switch k {
			case "Name":
				s.Name = v
			case "Type":
				s.Type = v
			case "Revision":
				s.Revision = uint8(atoi(t, v))
			case "Header":
				f := strings.Fields(v)
				for i := 0; i+1 < len(f); i++ {
					if f[i] == "family" {
						s.Family = f[i+1]
					}
				}
			case "Size in memory":
				s.MemSize = uint32(atoi(t, v))
			case "References":
				s.References = uint32(atoi(t, v))
			case "Number of entries":
				s.Entries = uint32(atoi(t, v))
			}
		}
		sets = append(sets, s)
	}
	return sets
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("ipset list -t: %q is not a number", s)
	}
	return n
}

// kube-proxy's ipvs sets (their real types, pkg/proxy/ipvs/proxier.go),
// other owners' sets, references from iptables-nft and legacy rules and
// from a list:set: the reader equals what `ipset list -t` shows.
func TestListEqualsIpsetToolInNetns(t *testing.T) {
	if !nstest.Setup(t, `
ipset create KUBE-CLUSTER-IP hash:ip,port family inet comment
ipset add KUBE-CLUSTER-IP 10.43.0.1,tcp:443
ipset add KUBE-CLUSTER-IP 10.43.0.10,udp:53
ipset create KUBE-LOOP-BACK hash:ip,port,ip family inet comment
ipset create KUBE-NODE-PORT-TCP bitmap:port range 0-65535 comment
ipset add KUBE-NODE-PORT-TCP 30080
ipset create KUBE-6-CLUSTER-IP hash:ip,port family inet6 comment
ipset add KUBE-6-CLUSTER-IP fd00::1,tcp:443
ipset create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet comment
ipset create f2b-sshd hash:ip family inet
ipset create keep-list list:set
ipset add keep-list f2b-sshd
iptables-nft -w -t nat -A POSTROUTING -m set --match-set KUBE-CLUSTER-IP dst,dst -j ACCEPT
iptables-legacy -w -t filter -A INPUT -m set --match-set KUBE-LOOP-BACK dst,dst,src -j ACCEPT
# enough sets that the header dump spans several 32 KiB chunks
i=0; while [ $i -lt 700 ]; do echo "create many-$i hash:net family inet6"; i=$((i+1)); done | ipset restore
`, "ipset", "iptables-nft", "iptables-legacy") {
		return
	}
	got, err := List()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ipset", "list", "-t").CombinedOutput()
	if err != nil {
		t.Fatalf("ipset list -t: %v\n%s", err, out)
	}
	want := parseListT(t, string(out))
	sortSets(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reader\n%+v\nipset list -t\n%+v\n%s", got, want, out)
	}
	if len(got) != 707 {
		t.Errorf("read %d sets, want 707", len(got))
	}
	// The cap holds: a dump past it is an error, not memory.
	c, err := nlsock.Dial(unix.NETLINK_NETFILTER)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n := 0
	err = c.Request(subsys<<8|cmdList, unix.NLM_F_DUMP, listRequest(), 100, func(uint16, []byte) error { n++; return nil })
	if !errors.Is(err, nlsock.ErrTooMany) || n != 100 {
		t.Errorf("a dump capped at 100 of 707: %d messages, %v; want 100 and ErrTooMany", n, err)
	}
	byName := map[string]Set{}
	for _, s := range got {
		byName[s.Name] = s
	}
	// The facts the leftover check rests on, beyond agreeing with the tool.
	if s := byName["KUBE-CLUSTER-IP"]; s.References != 1 || s.Entries != 2 || s.Family != "inet" {
		t.Errorf("KUBE-CLUSTER-IP = %+v, want 1 reference (the iptables-nft rule), 2 entries, inet", s)
	}
	if s := byName["KUBE-LOOP-BACK"]; s.References != 1 {
		t.Errorf("KUBE-LOOP-BACK = %+v, want 1 reference (the legacy rule)", s)
	}
	if s := byName["f2b-sshd"]; s.References != 1 {
		t.Errorf("f2b-sshd = %+v, want 1 reference (the list:set)", s)
	}
	if s := byName["KUBE-6-CLUSTER-IP"]; s.Family != "inet6" || s.References != 0 {
		t.Errorf("KUBE-6-CLUSTER-IP = %+v, want inet6 and no reference", s)
	}
}

func sortSets(s []Set) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].Name < s[j-1].Name; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Destroy removes an unreferenced set, refuses a referenced one with a
// sentence saying why, and reports a missing one as ENOENT.
func TestDestroyInNetns(t *testing.T) {
	if !nstest.Setup(t, `
ipset create KUBE-IPVS-IPS hash:ip family inet comment
ipset create KUBE-NODE-PORT-UDP bitmap:port range 0-65535 comment
iptables-nft -w -t filter -A INPUT -m set --match-set KUBE-NODE-PORT-UDP dst -j ACCEPT
`, "ipset", "iptables-nft") {
		return
	}
	if err := Destroy("KUBE-IPVS-IPS"); err != nil {
		t.Fatal(err)
	}
	err := Destroy("KUBE-NODE-PORT-UDP")
	if err == nil || !strings.Contains(err.Error(), "a rule still references the set") {
		t.Errorf("destroying a referenced set: %v, want the kernel's refusal named", err)
	}
	if err := Destroy("KUBE-IPVS-IPS"); !errors.Is(err, unix.ENOENT) {
		t.Errorf("destroying a missing set: %v, want ENOENT", err)
	}
	sets, err := List()
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Name != "KUBE-NODE-PORT-UDP" {
		t.Errorf("left %+v, want only KUBE-NODE-PORT-UDP", sets)
	}
}

// An empty namespace lists no set, not an error.
func TestListEmptyInNetns(t *testing.T) {
	if !nstest.Setup(t, "") {
		return
	}
	sets, err := List()
	if err != nil || len(sets) != 0 {
		t.Fatalf("List() = %+v, %v; want none", sets, err)
	}
}
