package prove

import (
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
)

// A flag given on the command line counts even with an empty or zero value;
// one left out leaves the config's value. Parsed flags go through Load as
// the verify and watch commands pass them.
func TestRegisteredFlagsOverrideTheConfigOnlyWhenGiven(t *testing.T) {
	root := testhost.New(t).File(hostfs.ConfigFile, "verify:\n  wait: 42s\n  textfile_dir: /srv/textfile\n").Root()
	for _, c := range []struct {
		name        string
		args        []string
		wait        time.Duration
		textfileDir string
		proxyMode   bool
	}{
		{"none given", nil, 42 * time.Second, "/srv/textfile", false},
		{"zero wait, empty dir", []string{"--wait", "0s", "--textfile-dir", ""}, 0, "", false},
		{"only the endpoint", []string{"--proxy-mode-url", ""}, 42 * time.Second, "/srv/textfile", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var fl Flags
			fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
			fl.Register(fs, "wait")
			if err := fs.Parse(append(c.args, "--expect", "nftables", "--no-status")); err != nil {
				t.Fatal(err)
			}
			cmd, err := Load(root, hostfs.ConfigFile, fl.Given(fs, ""))
			if err != nil {
				t.Fatal(err)
			}
			if cmd.Wait != c.wait || cmd.TextfileDir != c.textfileDir || (cmd.ProxyMode != nil) != c.proxyMode {
				t.Errorf("wait %s, textfile dir %q, endpoint %+v; want %s, %q, endpoint set %v", cmd.Wait, cmd.TextfileDir, cmd.ProxyMode, c.wait, c.textfileDir, c.proxyMode)
			}
			if cmd.Claim.Backend != "nftables" || !cmd.NoStatus {
				t.Errorf("claim %+v, no-status %v: want --expect and --no-status", cmd.Claim, cmd.NoStatus)
			}
		})
	}
}

// --proxy-mode-url is for tests and packaging's boot scripts: it must not
// show in --help.
func TestProxyModeURLFlagIsHidden(t *testing.T) {
	var fl Flags
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	fl.Register(fs, "wait")
	if f := fs.Lookup("proxy-mode-url"); f == nil || !f.Hidden {
		t.Errorf("proxy-mode-url: %+v; want a hidden flag", f)
	}
}

// --distribution, through Load's flags, overrides what the units say: a
// node with k3s's unit judged as RKE2 reads RKE2's CNI.
func TestDistributionFlagOverridesTheUnits(t *testing.T) {
	h := testhost.New(t).File(hostfs.IfInet6, "00000000000000000000000000000001 01 80 10 80       lo\n").
		K3sUnit("k3s-agent", "agent").K3sConfig("config.yaml", "disable-network-policy: true\n")
	writePlan(t, h.Root(), plan.Plan{Decision: plan.Decision{Backend: backend.NFTables}})
	var fl Flags
	fs := pflag.NewFlagSet("verify", pflag.ContinueOnError)
	kind := distro.Kind("")
	fs.Var(&kind, "distribution", "")
	fl.Register(fs, "wait")
	if err := fs.Parse([]string{"--distribution", "rke2"}); err != nil {
		t.Fatal(err)
	}
	c, err := Load(h.Root(), hostfs.ConfigFile, fl.Given(fs, kind))
	if err != nil {
		t.Fatal(err)
	}
	opts, _, err := verify.ForHost(c.Host)
	if err != nil || opts.Distribution != distro.RKE2 || opts.CNI == nil || opts.K3s != nil {
		t.Errorf("--distribution rke2: distribution %q, CNI %+v, k3s %+v, %v: want RKE2's CNI read", opts.Distribution, opts.CNI, opts.K3s, err)
	}
}
