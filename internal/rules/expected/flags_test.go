package expected

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
)

func TestFlagOptions(t *testing.T) {
	v133, err := rke2.ParseVersion("v1.33")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kube, family string
		services     int
		want         Options
		wantErr      string
	}{
		{"", "", 0, Options{Backend: backend.NFTables}, ""},
		{"v1.33", "ipv6", 7, Options{Backend: backend.NFTables, Kubernetes: v133, Families: []rules.Family{rules.IPv6}, Services: 7}, ""},
		{"", "ipv4", 0, Options{Backend: backend.NFTables, Families: []rules.Family{rules.IPv4}}, ""},
		{"latest", "", 0, Options{}, `--kubernetes: version "latest"`},
		{"", "inet", 0, Options{}, `--family "inet": valid families are ipv4, ipv6`},
		{"", "IPv4", 0, Options{}, `--family "IPv4": valid families are ipv4, ipv6`},
		{"", "", -1, Options{}, "--services -1: must be 0 or more"},
	} {
		got, err := FlagOptions(backend.NFTables, tc.kube, tc.family, tc.services)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q %q %d: %v; want an error containing %q", tc.kube, tc.family, tc.services, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q %q %d: %+v, %v; want %+v", tc.kube, tc.family, tc.services, got, err, tc.want)
		}
		// What the flags ask for renders: the options are Render's own.
		if _, err := Render(got); err != nil {
			t.Errorf("Render(%+v): %v", got, err)
		}
	}
}

// Whatever the words, FlagOptions either says which flag is wrong or
// returns exactly what was asked for: the one family named, the services
// given, a Kubernetes version only when one was named.
func FuzzFlagOptions(f *testing.F) {
	f.Add("v1.33", "ipv4", 3)
	f.Add("", "", 0)
	f.Add("1.29.4", "ipv6", -2)
	f.Add("latest", "inet", 60001)
	f.Fuzz(func(t *testing.T, kube, family string, services int) {
		got, err := FlagOptions(backend.IptablesNFT, kube, family, services)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "--kubernetes: ") && !strings.HasPrefix(msg, "--family ") && !strings.HasPrefix(msg, "--services ") {
				t.Fatalf("%q %q %d: error %q names no flag", kube, family, services, msg)
			}
			return
		}
		if got.Backend != backend.IptablesNFT || got.Services != services || services < 0 {
			t.Fatalf("%q %q %d: %+v", kube, family, services, got)
		}
		if family == "" && got.Families != nil || family != "" && (len(got.Families) != 1 || string(got.Families[0]) != family) {
			t.Fatalf("family %q became %v", family, got.Families)
		}
		if (kube != "") != got.Kubernetes.Known() {
			t.Fatalf("--kubernetes %q became %+v", kube, got.Kubernetes)
		}
	})
}
