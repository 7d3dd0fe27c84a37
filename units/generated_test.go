package units

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func TestGenerateServer(t *testing.T) {
	files, err := Generate(Input{Backend: backend.IptablesLegacy, Units: []string{"rke2-server.service"}, VerifyWait: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"rke2-server.service.d/50-rke2-proxy-backend.conf": Header + `[Unit]
Wants=rke2-proxy-backend-verify.service

[Service]
Environment=RKE2_PROXY_BACKEND_DECISION=iptables-legacy
ExecStartPre=/usr/bin/rke2-proxy-backend apply --backend=iptables-legacy
`,
		"rke2-proxy-backend-verify.service.d/50-rke2-proxy-backend.conf": Header + `[Service]
ExecStart=
ExecStart=/usr/bin/rke2-proxy-backend verify --wait=1m30s
`,
	}
	if len(files) != len(want) {
		t.Fatalf("got %d files, want %d", len(files), len(want))
	}
	for _, f := range files {
		if string(f.Data) != want[f.Path] {
			t.Errorf("%s:\n%s\nwant:\n%s", f.Path, f.Data, want[f.Path])
		}
	}
}

func TestGenerateSortedAndDeterministic(t *testing.T) {
	in := Input{Backend: backend.NFTables, Units: []string{"rke2-server.service", "rke2-agent.service", "rke2-server.service"}}
	a, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Units = []string{"rke2-agent.service", "rke2-server.service"}
	b, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range a {
		paths = append(paths, a[i].Path)
		if a[i].Path != b[i].Path || !bytes.Equal(a[i].Data, b[i].Data) {
			t.Errorf("file %d differs between equal inputs", i)
		}
	}
	wantPaths := "rke2-agent.service.d/50-rke2-proxy-backend.conf rke2-proxy-backend-verify.service.d/50-rke2-proxy-backend.conf rke2-server.service.d/50-rke2-proxy-backend.conf"
	if strings.Join(paths, " ") != wantPaths {
		t.Errorf("paths %v, want %s", paths, wantPaths)
	}
}

func TestGenerateNoUnitsNoFiles(t *testing.T) {
	files, err := Generate(Input{Backend: backend.IptablesNFT})
	if err != nil || files != nil {
		t.Fatalf("Generate without units = %v, %v; want nothing", files, err)
	}
}

func TestGenerateRefuses(t *testing.T) {
	for name, in := range map[string]Input{
		"bad backend":      {Backend: "modern", Units: []string{"rke2-server.service"}},
		"path unit name":   {Backend: backend.IptablesNFT, Units: []string{"../../etc/x.service"}},
		"our own unit":     {Backend: backend.IptablesNFT, Units: []string{VerifyUnit}},
		"newline config":   {Backend: backend.IptablesNFT, Units: []string{"rke2-server.service"}, ConfigFile: "/etc/x\nExecStartPre=/bin/evil"},
		"empty backend":    {Units: []string{"rke2-server.service"}},
		"control in units": {Backend: backend.IptablesNFT, Units: []string{"rke2\x00.service"}},
	} {
		if files, err := Generate(in); err == nil {
			t.Errorf("%s: Generate = %d files, want an error", name, len(files))
		}
	}
}

// A config path full of systemd metacharacters reaches apply and verify as
// one argument, and adds no directive to any drop-in.
func TestGenerateNoInjection(t *testing.T) {
	for _, cfg := range []string{
		`/etc/my config/x.yaml`,
		`/etc/"quoted"/x.yaml`,
		`/etc/%n%i/x.yaml`,
		`/etc/$HOME/${X}/x.yaml`,
		`/etc/a;/bin/evil`,
		`/etc/x.yaml" ; ExecStartPre=/bin/evil "`,
		`/etc/back\slash\`,
	} {
		files, err := Generate(Input{Backend: backend.IptablesNFT, Units: []string{"rke2-agent.service"}, ConfigFile: cfg})
		if err != nil {
			t.Fatalf("%q: %v", cfg, err)
		}
		for _, f := range files {
			opts, err := unit.Deserialize(bytes.NewReader(f.Data))
			if err != nil {
				t.Fatalf("%q: %s does not parse: %v", cfg, f.Path, err)
			}
			var names []string
			for _, o := range opts {
				names = append(names, o.Section+"."+o.Name)
				if !strings.HasPrefix(o.Name, "Exec") || o.Value == "" {
					continue
				}
				argv, err := systemdExecWords(o.Value)
				if err != nil {
					t.Fatalf("%q: %s: %v", cfg, o.Value, err)
				}
				if argv[len(argv)-1] != "--config="+cfg {
					t.Errorf("%q: systemd would pass %q", cfg, argv)
				}
			}
			got := strings.Join(names, " ")
			want := "Unit.Wants Service.Environment Service.ExecStartPre"
			if strings.HasPrefix(f.Path, VerifyUnit) {
				want = "Service.ExecStart Service.ExecStart"
			}
			if got != want {
				t.Errorf("%q: %s has directives %s, want %s", cfg, f.Path, got, want)
			}
		}
	}
}

// The shipped units carry the settings the design relies on.
func TestShipped(t *testing.T) {
	// RKE2's units and k3s's (install.sh names the server k3s, the agent
	// k3s-agent): watch runs only while one of them wants it.
	distUnits := "rke2-server.service rke2-agent.service k3s.service k3s-agent.service"
	for name, settings := range map[string]map[string]string{
		VerifyUnit: {
			"Service.Type":      "oneshot",
			"Unit.After":        distUnits,
			"Service.ExecStart": hostfs.Binary + " verify --wait=" + DefaultVerifyWait.String(),
		},
		WatchUnit: {
			"Service.Type":      "simple",
			"Service.Restart":   "on-failure",
			"Service.ExecStart": hostfs.Binary + " watch",
			"Unit.After":        distUnits,
			// PartOf= comes from the generator, for the enabled unit only.
			"Unit.PartOf":           "",
			"Unit.StopWhenUnneeded": "yes",
			"Install.WantedBy":      distUnits,
			"Service.Nice":          "10",
		},
	} {
		data, ok := Shipped()[name]
		if !ok {
			t.Errorf("shipped units %v lack %s", ShippedNames(), name)
			continue
		}
		opts, err := unit.Deserialize(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		found := map[string]string{}
		for _, o := range opts {
			found[o.Section+"."+o.Name] = o.Value
		}
		for key, want := range settings {
			if found[key] != want {
				t.Errorf("%s %s = %q, want %q", name, key, found[key], want)
			}
		}
	}
}

// A tarball install under /usr/local: every command line the drop-ins
// carry runs the binary the generator was started as, not /usr/bin's.
func TestGenerateRunsTheGivenBinary(t *testing.T) {
	const bin = "/usr/local/bin/rke2-proxy-backend"
	for _, in := range []Input{
		{Backend: backend.IptablesLegacy, Units: []string{"rke2-server.service"}, Binary: bin},
		{Units: []string{"rke2-agent.service"}, Binary: bin, Undecided: true},
	} {
		files, err := Generate(in)
		if err != nil {
			t.Fatal(err)
		}
		var execs int
		for _, f := range files {
			opts, err := unit.Deserialize(bytes.NewReader(f.Data))
			if err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			for _, o := range opts {
				if (o.Name == "ExecStart" || o.Name == "ExecStartPre") && o.Value != "" {
					execs++
					if !strings.HasPrefix(o.Value, bin+" ") {
						t.Errorf("%s: %s=%s, want it to run %s", f.Path, o.Name, o.Value, bin)
					}
				}
			}
		}
		if want := len(files); execs != want {
			t.Errorf("undecided=%v: %d command lines in %d files", in.Undecided, execs, want)
		}
	}
	if _, err := Generate(Input{Backend: backend.IptablesNFT, Units: []string{"rke2-server.service"}, Binary: "bin/rke2-proxy-backend"}); err == nil {
		t.Error("a relative binary path was accepted")
	}
}

// watch follows the one enabled RKE2 unit: a drop-in with PartOf= that unit,
// none without one, and a unit that is not RKE2's is refused.
func TestGenerateWatchPartOf(t *testing.T) {
	both := []string{"rke2-agent.service", "rke2-server.service"}
	files, err := Generate(Input{Backend: backend.IptablesNFT, Units: both, WatchPartOf: "rke2-agent.service"})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, f := range files {
		if f.Path == WatchUnit+".d/"+hostfs.UnitDropInName {
			got = string(f.Data)
		}
	}
	if want := Header + "[Unit]\nPartOf=rke2-agent.service\n"; got != want {
		t.Errorf("watch drop-in = %q, want %q", got, want)
	}
	files, err = Generate(Input{Backend: backend.IptablesNFT, Units: both})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Path, WatchUnit) {
			t.Errorf("no enabled unit, yet %s was written", f.Path)
		}
	}
	if _, err := Generate(Input{Backend: backend.IptablesNFT, Units: both, WatchPartOf: "sshd.service"}); err == nil || !strings.Contains(err.Error(), "sshd.service") {
		t.Errorf("PartOf= a unit that is not RKE2's: err = %v", err)
	}
}

// render writes what go-systemd's unit.Serialize wrote before it (the
// generator's goldens hold the bytes): sections grouped in the order first
// named, settings in the order given, a blank line between sections. Each
// fuzzed byte picks a section (of three) and a setting.
func FuzzRenderAsGoSystemd(f *testing.F) {
	f.Add([]byte{0, 1, 1}, "v")
	f.Add([]byte{1, 0, 1, 2, 0}, "")
	f.Add([]byte{}, "x")
	f.Fuzz(func(t *testing.T, picks []byte, value string) {
		sections := []string{"Unit", "Service", "Install"}
		var ours []option
		var theirs []*unit.UnitOption
		for i, p := range picks {
			sec, name, v := sections[int(p)%len(sections)], fmt.Sprintf("K%d", p/3), fmt.Sprint(value, i)
			ours = append(ours, opt(sec, name, v))
			theirs = append(theirs, unit.NewUnitOption(sec, name, v))
		}
		want, err := io.ReadAll(unit.Serialize(theirs))
		if err != nil {
			t.Fatal(err)
		}
		if got := render(ours); string(got) != Header+string(want) {
			t.Fatalf("render:\n%q\ngo-systemd's unit.Serialize after Header:\n%q", got, Header+string(want))
		}
	})
}
