package facts

import (
	"context"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter/nl"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/skew"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// maxUserdataSets bounds the set dump: a firewall with thousands of named
// sets is plausible, a million is not, and the list goes into the facts.
const maxUserdataSets = 20000

// ForeignUserdataSets lists the sets carrying user data in every table
// kube-proxy does not own (any family; kube-proxy's own ip and ip6
// kube-proxy tables are written by its image's nft, which reads its own
// sets). It reads the running kernel: call it on the real host only.
// While nf_tables is not loaded there are none, and the kernel is not
// asked (netfilter.NFTablesAbsent).
func ForeignUserdataSets(ctx context.Context) ([]skew.UserdataSet, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if netfilter.NFTablesAbsent(hostfs.New("/")) != "" {
		return []skew.UserdataSet{}, nil // no set can exist, and asking would load nf_tables
	}
	conn, err := nl.Dial()
	if err != nil {
		return nil, fmt.Errorf("opening a netfilter netlink socket: %w", err)
	}
	defer conn.Close()
	sets, err := conn.DumpSetUserdata(maxUserdataSets)
	if err != nil {
		return nil, fmt.Errorf("listing nftables sets: %w", err)
	}
	out := []skew.UserdataSet{}
	for _, s := range sets {
		fam := nl.FamilyName(s.Family)
		if s.Table == vocab.NFTablesTable && (fam == "ip" || fam == "ip6") {
			continue
		}
		out = append(out, skew.UserdataSet{Family: fam, Table: s.Table, Name: s.Name, Kinds: s.Kinds})
	}
	return out, nil
}

// userdataSets fills lr's foreign sets when live rules are read.
func (p *probe) userdataSets(lr *LiveRules) {
	sets, err := ForeignUserdataSets(context.Background())
	if err != nil {
		p.problem("Sets with user data could not be listed (%s): whether kube-proxy's image nft meets sets it may crash on is unknown.", err)
		return
	}
	lr.UserdataSets, lr.UserdataSetsRead = sets, true
}

// SkewHost is what skew.Judge needs from the facts: RKE2's release and
// Kubernetes version, the host's nft, and the foreign sets if read.
func SkewHost(f Facts) skew.Host {
	h := skew.Host{Release: f.RKE2.Version, Kubernetes: kubeVersion(f.RKE2.Kubernetes),
		Sets: f.LiveRules.UserdataSets, SetsRead: f.LiveRules.UserdataSetsRead}
	if v, err := skew.ParseVersion(f.Userspace.Nft.Version); err == nil {
		h.Nft, h.NftSource = v, f.Userspace.Nft.Source
	}
	if f.RKE2.Distribution.Profile().KubeProxyEmbedded {
		// No image: the nft on k3s's PATH reads the sets.
		n := f.RKE2.K3sRunningNft(f.Userspace.Nft)
		if v, err := skew.ParseVersion(n.Version.Version); err == nil {
			h.Reader, h.ReaderSource = v, fmt.Sprintf("%s on k3s's PATH, per %s", n.Path, n.Version.Source)
		}
	}
	return h
}

// kubeVersion is the full Kubernetes version, unknown without a patch:
// the pairs' kube-proxy ranges end at patch releases.
func kubeVersion(v rke2.KubeVersion) skew.Version {
	if !v.Known() || v.Patch < 0 {
		return skew.Version{}
	}
	kv, err := skew.ParseVersion(fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch))
	if err != nil {
		return skew.Version{}
	}
	return kv
}
