package verify

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// dualStack is a host whose kernel has IPv6 on.
func dualStack(t *testing.T) *testhost.Host {
	return testhost.New(t).File(hostfs.IfInet6, "00000000000000000000000000000001 01 80 10 80       lo\n")
}

// withPlan records p as apply does when it gave RKE2 p's decision (unless
// p says what was applied itself).
func withPlan(t *testing.T, h *testhost.Host, p plan.Plan) *testhost.Host {
	t.Helper()
	if p.Applied == (plan.Applied{}) && !p.Decision.Disabled {
		p.Applied = plan.Applied{Backend: p.Decision.Backend, ProxyMode: p.Decision.ProxyMode, DropIn: "/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml", By: plan.ByApply}
	}
	if _, err := plan.Write(h.Root(), p); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestExpectFromThePlan(t *testing.T) {
	h := withPlan(t, dualStack(t), plan.Plan{Decision: plan.Decision{Backend: backend.NFTables, Source: config.SourceCmdline}, Kubernetes: "v1.31"})
	var o Options
	unknown, err := Expect(h.Root(), Claim{}, &o)
	if err != nil || unknown != nil {
		t.Fatalf("Expect = %+v, %v", unknown, err)
	}
	want := Options{Expect: backend.NFTables, ExpectSource: hostfs.PlanFile, OneBootOverride: true,
		Kubernetes: rke2.KubeVersion{Major: 1, Minor: 31, Patch: -1}, Families: []rules.Family{rules.IPv4, rules.IPv6}, HostIptables: "unknown"}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("options\n%+v\nwant\n%+v", o, want)
	}
}

// The flags win over the plan, each on its own, and single-stack nodes are
// judged single-stack.
func TestExpectClaimOverridesThePlan(t *testing.T) {
	h := withPlan(t, testhost.New(t), plan.Plan{Decision: plan.Decision{Backend: backend.NFTables}, Kubernetes: "v1.31"})
	var o Options
	if unknown, err := Expect(h.Root(), Claim{Backend: "iptables-legacy"}, &o); err != nil || unknown != nil {
		t.Fatalf("Expect = %+v, %v", unknown, err)
	}
	if o.Expect != backend.IptablesLegacy || o.ExpectSource != "--expect" || o.OneBootOverride || o.Kubernetes.Minor != 31 {
		t.Errorf("options %+v: want --expect's backend with the plan's Kubernetes", o)
	}
	if !reflect.DeepEqual(o.Families, []rules.Family{rules.IPv4}) || !strings.Contains(o.SingleStackReason, hostfs.IfInet6) {
		t.Errorf("families %v (%q): a node without %s is single-stack", o.Families, o.SingleStackReason, hostfs.IfInet6)
	}
	o = Options{}
	if _, err := Expect(h.Root(), Claim{Kubernetes: "v1.29"}, &o); err != nil || o.Expect != backend.NFTables || o.Kubernetes.Minor != 29 {
		t.Errorf("options %+v, %v: want the plan's backend with --kubernetes' version", o, err)
	}
}

func TestExpectCannotTell(t *testing.T) {
	cases := []struct {
		name, plan, reason string
	}{
		{"no plan", "", "no plan at " + hostfs.PlanFile},
		{"corrupt plan", "{half", "the plan cannot be read"},
		{"unknown backend", `{"decision":{"backend":"modern"},"drop_in":"/x"}`, "applied.backend"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := dualStack(t)
			if c.plan != "" {
				h.File(hostfs.PlanFile, c.plan)
			}
			var o Options
			unknown, err := Expect(h.Root(), Claim{}, &o)
			if err != nil || unknown == nil || unknown.Verdict != VerdictUnknown || !strings.Contains(unknown.Findings[0].Message, c.reason) {
				t.Fatalf("Expect = %+v, %v; want cannot tell with %q", unknown, err, c.reason)
			}
			if unknown.Findings[0].Fix != noPlanFix(distro.RKE2.Profile()) || o.Expect != "" {
				t.Errorf("fix %q, expect %q", unknown.Findings[0].Fix, o.Expect)
			}
		})
	}
}

// A plan whose backend was not applied (issue 30: the kernel refused it,
// and schema 1 recorded it all the same) says nothing about what kube-proxy
// runs: verify cannot tell, never passes against it. What RKE2 reads
// instead, an earlier run's drop-in, is what it verifies.
func TestExpectOnlyWhatWasApplied(t *testing.T) {
	for name, doc := range map[string]string{
		"schema 2": `{"schema":2,"applied":{"nothing":"no backend can run on this host; RKE2 starts with its own defaults"},"decision":{"backend":"iptables-nft","proxy_mode":"iptables","source":"auto"}}`,
		"schema 1": `{"schema":1,"decision":{"backend":"iptables-nft","proxy_mode":"iptables","source":"auto"},"modules_loaded":[],"warnings":["could not apply"]}`,
	} {
		for _, kind := range []distro.Kind{distro.RKE2, distro.Kind("k3s")} {
			t.Run(name+" "+string(kind), func(t *testing.T) {
				h := dualStack(t).File(hostfs.PlanFile, doc)
				o := Options{Distribution: kind}
				unknown, err := Expect(h.Root(), Claim{}, &o)
				if err != nil || unknown == nil || unknown.Verdict != VerdictUnknown || o.Expect != "" {
					t.Fatalf("Expect = %+v, %v, expect %q; want cannot tell", unknown, err, o.Expect)
				}
				d := kind.Profile()
				if f := unknown.Findings[0]; !strings.HasPrefix(f.Message, "not applied: plan "+hostfs.PlanFile+" says apply gave "+d.Name+" no backend this boot (") || f.Fix != notAppliedFix(d) {
					t.Errorf("finding %+v", f)
				}
				// the node's own words: a k3s node has no rke2 units
				if f := unknown.Findings[0]; (kind != distro.RKE2) == strings.Contains(f.Fix, "rke2") {
					t.Errorf("%s node told %q", kind, f.Fix)
				}
			})
		}
	}
	h := withPlan(t, dualStack(t), plan.Plan{Applied: plan.Applied{Backend: backend.IptablesLegacy, ProxyMode: "iptables", By: plan.ByEarlierRun},
		Decision: plan.Decision{Backend: backend.IptablesNFT, Source: config.SourceCmdline}})
	var o Options
	if unknown, err := Expect(h.Root(), Claim{}, &o); err != nil || unknown != nil || o.Expect != backend.IptablesLegacy || o.OneBootOverride {
		t.Errorf("Expect = %+v, %v, options %+v; want the earlier run's iptables-legacy, no one-boot override", unknown, err, o)
	}
}

func TestExpectNothingWhenTurnedOff(t *testing.T) {
	h := withPlan(t, dualStack(t), plan.Plan{Decision: plan.Decision{Disabled: true}})
	var o Options
	if unknown, err := Expect(h.Root(), Claim{}, &o); err != nil || unknown != nil || o.Expect != "" {
		t.Errorf("Expect = %+v, %v, expect %q; want nothing to verify", unknown, err, o.Expect)
	}
}

// An ipvs node's plan (proxy mode kept, iptables backend under it) is
// judged as ipvs mode in the backend under it, also when --expect names
// the backend; nftables under ipvs cannot be, and says why.
func TestExpectIPVSModeJudgesTheBackendUnderIt(t *testing.T) {
	h := withPlan(t, dualStack(t), plan.Plan{Decision: plan.Decision{Backend: backend.IptablesNFT, ProxyMode: "ipvs"}})
	var o Options
	if unknown, err := Expect(h.Root(), Claim{}, &o); unknown != nil || err != nil || o.Expect != backend.IptablesNFT || o.ProxyMode != ProxyModeIPVS {
		t.Errorf("Expect = %+v, %v, expect %q mode %q; want iptables-nft under ipvs", unknown, err, o.Expect, o.ProxyMode)
	}
	o = Options{}
	if _, err := Expect(h.Root(), Claim{Backend: "iptables-legacy", Kubernetes: "v1.36"}, &o); err != nil || o.Expect != backend.IptablesLegacy || o.ProxyMode != ProxyModeIPVS {
		t.Errorf("with --expect: %v, expect %q mode %q", err, o.Expect, o.ProxyMode)
	}
	o = Options{}
	unknown, err := Expect(h.Root(), Claim{Backend: "nftables"}, &o)
	if err != nil || unknown == nil || unknown.Verdict != VerdictUnknown || !strings.Contains(unknown.Findings[0].Message, "ipvs mode") {
		t.Errorf("nftables under ipvs: %+v, %v; want a cannot-tell naming ipvs mode", unknown, err)
	}
}

func TestExpectErrors(t *testing.T) {
	h := withPlan(t, dualStack(t), plan.Plan{Decision: plan.Decision{Backend: backend.IptablesNFT}, Kubernetes: "one-thirty"})
	var bad *FlagError
	for _, c := range []struct {
		claim Claim
		flag  string
	}{{Claim{Backend: "ipvs"}, "--expect"}, {Claim{Kubernetes: "1.x"}, "--kubernetes"}} {
		_, err := Expect(h.Root(), c.claim, &Options{})
		if !errors.As(err, &bad) || bad.Flag != c.flag || !strings.HasPrefix(err.Error(), c.flag+": ") {
			t.Errorf("Expect(%+v) = %v; want a %s flag error", c.claim, err, c.flag)
		}
	}
	// The plan's own version is broken: not the operator's flag.
	_, err := Expect(h.Root(), Claim{}, &Options{})
	if err == nil || errors.As(err, &bad) || !strings.HasPrefix(err.Error(), "plan "+hostfs.PlanFile+": kubernetes: ") {
		t.Errorf("Expect = %v; want an error naming the plan's kubernetes", err)
	}
}
