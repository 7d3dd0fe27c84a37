package cli

import (
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

func TestBackendFlags(t *testing.T) {
	cases := []struct {
		name    string
		parse   func() (backend.Backend, error)
		want    backend.Backend
		wantErr string
	}{
		{"given", func() (backend.Backend, error) { return backendFlag("--backend", "nftables", true) }, backend.NFTables, ""},
		{"optional and absent", func() (backend.Backend, error) { return backendFlag("--backend", "", false) }, "", ""},
		{"required and absent", func() (backend.Backend, error) { return backendFlag("--backend", "", true) }, "", "--backend is required: one of "},
		{"unknown", func() (backend.Backend, error) { return backendFlag("--to", "ipvs", true) }, "", "--to: "},
		{"all", func() (backend.Backend, error) { return backendOrAll("--backend", "all") }, "", ""},
		{"one of all", func() (backend.Backend, error) { return backendOrAll("--backend", "iptables-legacy") }, backend.IptablesLegacy, ""},
		{"unknown or all", func() (backend.Backend, error) { return backendOrAll("--backend", "") }, "", "(or all)"},
	}
	for _, c := range cases {
		got, err := c.parse()
		if got != c.want || (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: %q, %v; want %q, error containing %q", c.name, got, err, c.want, c.wantErr)
		}
	}
}
