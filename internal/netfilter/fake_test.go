package netfilter

import (
	"context"
	"errors"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

func TestFakeReturnsCopies(t *testing.T) {
	in := &rules.Ruleset{Backend: backend.IptablesNFT, Tables: []rules.Table{{Family: rules.IPv4, Name: "nat",
		Chains: []rules.Chain{{Name: "KUBE-SERVICES"}, {Name: "PREROUTING", Hook: "prerouting", Rules: []rules.Rule{{Text: "-j KUBE-SERVICES", Jump: "KUBE-SERVICES"}}}}}}}
	f := NewFake(in)
	in.Tables[0].Name = "changed"
	got, err := f.Read(context.Background(), backend.IptablesNFT)
	if err != nil {
		t.Fatal(err)
	}
	if got.Tables[0].Name != "nat" || got.Tables[0].Chains[0].Name != "PREROUTING" {
		t.Errorf("Read = %+v, want the sorted copy taken at Set", got)
	}
	got.Tables[0].Chains[0].Rules[0].Text = "changed"
	again, _ := f.Read(context.Background(), backend.IptablesNFT)
	if again.Tables[0].Chains[0].Rules[0].Text != "-j KUBE-SERVICES" {
		t.Errorf("changing a read ruleset changed the Fake")
	}
	empty, err := f.Read(context.Background(), backend.NFTables)
	if err != nil || empty.Backend != backend.NFTables || len(empty.Tables) != 0 {
		t.Errorf("unset backend = %+v, %v; want empty", empty, err)
	}
	want := "# backend iptables-nft\n# family ipv4\n*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n-A PREROUTING -j KUBE-SERVICES\nCOMMIT\n"
	if d := f.Dump(); d != want {
		t.Errorf("Dump =\n%s\nwant\n%s", d, want)
	}
	boom := errors.New("boom")
	f.SetError(backend.NFTables, boom)
	if _, err := f.Read(context.Background(), backend.NFTables); !errors.Is(err, boom) {
		t.Errorf("SetError not returned: %v", err)
	}
	if _, err := f.Read(context.Background(), "bogus"); err == nil {
		t.Errorf("unknown backend accepted")
	}
}
