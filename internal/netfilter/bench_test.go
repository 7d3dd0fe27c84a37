package netfilter

import (
	"context"
	"fmt"
	"os/exec"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/ruleload"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/expectedtest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// BenchmarkReaders compares each reader with the backend's own dump tool
// on N synthetic kube-proxy services (both families), in a network
// namespace: go test -run '^$' -bench Readers ./internal/netfilter
func BenchmarkReaders(b *testing.B) {
	if !nstest.InNetns(b) {
		return
	}
	tools := map[backend.Backend]string{
		backend.IptablesLegacy: "iptables-legacy-save; ip6tables-legacy-save",
		backend.IptablesNFT:    "iptables-nft-save; ip6tables-nft-save",
		backend.NFTables:       "nft list ruleset",
	}
	for _, n := range []int{1000, 5000} {
		for _, be := range backend.All {
			nstest.Flush(b, backend.All...)
			rs, err := expected.Render(expected.Options{Backend: be, Services: n})
			if err != nil {
				b.Fatal(err)
			}
			for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
				if err := ruleload.Load(be, rs, fam); err != nil {
					b.Fatalf("%d services: %v", n, err)
				}
			}
			sys := NewSystem(hostfs.New("/"))
			b.Run(fmt.Sprintf("%s/%d/reader", be, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := sys.Read(context.Background(), be); err != nil {
						b.Fatal(err)
					}
				}
			})
			// verify's read: legacy tables in-process, iptables rules
			// of per-service chains only counted, the others only their
			// jump and comment, nft without anonymous set elements.
			shallow := NewSystem(hostfs.New("/"))
			shallow.Shallow, shallow.SkipChain = true, vocab.IsPerServiceChain
			b.Run(fmt.Sprintf("%s/%d/reader-shallow", be, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := shallow.Read(context.Background(), be); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("%s/%d/tool", be, n), func(b *testing.B) {
				for b.Loop() {
					if out, err := exec.Command("sh", "-c", tools[be]+" >/dev/null").CombinedOutput(); err != nil {
						b.Fatalf("%s: %v\n%s", tools[be], err, out)
					}
				}
			})
		}
	}
}

// BenchmarkLegacyShallow is verify's legacy read alone at 1k, 5k and 10k
// synthetic services (both families), for -benchmem and -memprofile:
// go test -run '^$' -bench LegacyShallow -benchmem ./internal/netfilter
func BenchmarkLegacyShallow(b *testing.B) {
	if !nstest.InNetns(b) {
		return
	}
	for _, n := range []int{1000, 5000, 10000} {
		nstest.Flush(b, backend.IptablesLegacy)
		rs, err := expected.Render(expected.Options{Backend: backend.IptablesLegacy, Services: n})
		if err != nil {
			b.Fatal(err)
		}
		for _, fam := range []rules.Family{rules.IPv4, rules.IPv6} {
			if err := ruleload.Load(backend.IptablesLegacy, rs, fam); err != nil {
				b.Fatalf("%d services: %v", n, err)
			}
		}
		shallow := NewSystem(hostfs.New("/"))
		shallow.Shallow, shallow.SkipChain = true, vocab.IsPerServiceChain
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if _, err := shallow.Read(context.Background(), backend.IptablesLegacy); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNFTablesShallow is verify's native nftables read alone at 5k
// synthetic services (both families), for -benchmem and -memprofile:
// go test -run '^$' -bench NFTablesShallow -benchmem ./internal/netfilter
func BenchmarkNFTablesShallow(b *testing.B) {
	if !nstest.InNetns(b) {
		return
	}
	expectedtest.Load(b, expected.Options{Backend: backend.NFTables, Services: 5000})
	shallow := NewSystem(hostfs.New("/"))
	shallow.Shallow, shallow.SkipNFTablesChain = true, vocab.IsNFTablesPerServiceChain
	for b.Loop() {
		if _, err := shallow.Read(context.Background(), backend.NFTables); err != nil {
			b.Fatal(err)
		}
	}
}
