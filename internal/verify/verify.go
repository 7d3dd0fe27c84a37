// Package verify proves after RKE2 starts that kube-proxy programmed the
// expected backend completely and that no kube-proxy rules are stranded in
// another backend; it writes the result as a status file and as Prometheus
// textfile metrics.
package verify

import (
	"context"
	"fmt"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/netfilter"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules/expected"
)

// DefaultPoll is how often verify looks again while it waits for
// kube-proxy's first sync.
const DefaultPoll = 2 * time.Second

// Options are one verify run's inputs.
type Options struct {
	Expect backend.Backend
	// ExpectSource says where Expect came from ("plan" or "flag").
	ExpectSource string
	// Kubernetes selects the layout; zero means unknown (then both nftables
	// layouts are accepted).
	Kubernetes rke2.KubeVersion
	// Families kube-proxy programs on this node (empty: both); a node
	// without usable IPv6 runs kube-proxy single-stack (see facts.IPFamilies).
	Families []rules.Family
	// SingleStackReason says why IPv6 is not among Families, for the note.
	SingleStackReason string
	Reader            netfilter.Reader
	// Wait bounds the wait for kube-proxy's first sync; Poll is the interval.
	Wait, Poll time.Duration
	// ProxyModeURL is kube-proxy's /proxyMode endpoint ("" skips the check).
	ProxyModeURL string
	// Sleep is time.Sleep-like and honours ctx (tests replace it).
	Sleep func(ctx context.Context, d time.Duration) error
}

// BackendState is what verify found in one backend.
type BackendState struct {
	Backend  backend.Backend `json:"backend"`
	Expected bool            `json:"expected"`
	// Complete is set for the expected backend: the whole skeleton is there.
	Complete bool `json:"complete,omitempty"`
	// KubeProxyChains and KubeProxyRules count kube-proxy's objects
	// (stranded ones when the backend is not the expected one).
	KubeProxyChains int      `json:"kube_proxy_chains"`
	KubeProxyRules  int      `json:"kube_proxy_rules"`
	KubeletHints    []string `json:"kubelet_hints,omitempty"`
	ReadError       string   `json:"read_error,omitempty"`
	// Owned is the detail behind the counts; Live is what was read.
	Owned *expected.Owned `json:"-"`
	Live  *rules.Ruleset  `json:"-"`
}

// Result is the outcome, as printed with -o json and stored in status.json.
type Result struct {
	OK           bool            `json:"ok"`
	Expect       backend.Backend `json:"expect"`
	ExpectSource string          `json:"expect_source"`
	Kubernetes   string          `json:"kubernetes,omitempty"`
	// Synced is true when the expected skeleton appeared within the wait.
	Synced    bool           `json:"synced"`
	ProxyMode string         `json:"proxy_mode,omitempty"`
	Backends  []BackendState `json:"backends"`
	Findings  []Finding      `json:"findings"`
	Notes     []string       `json:"notes,omitempty"`
	// Duration is not in the JSON: status.json stays byte-stable between
	// runs on an unchanged node; the metrics carry the timing.
	Duration time.Duration `json:"-"`
}

// Run waits for kube-proxy's first sync in the expected backend (up to
// opts.Wait), then checks every backend and kube-proxy's proxy mode.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if _, err := backend.Parse(string(opts.Expect)); err != nil {
		return nil, fmt.Errorf("expected backend: %w", err)
	}
	if opts.Poll <= 0 {
		opts.Poll = DefaultPoll
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	judge, err := newJudge(opts)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res := &Result{Expect: opts.Expect, ExpectSource: opts.ExpectSource, Findings: []Finding{}}
	if opts.Kubernetes.Known() {
		res.Kubernetes = fmt.Sprintf("v%d.%d", opts.Kubernetes.Major, opts.Kubernetes.Minor)
	}
	var live *rules.Ruleset
	var missing []Finding
	var layoutNote string
	for {
		live, err = opts.Reader.Read(ctx, opts.Expect)
		if err == nil {
			missing, layoutNote = judge.findings(live)
			if len(missing) == 0 {
				res.Synced = true
				break
			}
		}
		// Waiting cannot help when the tools are missing or we lack rights.
		if time.Since(start) >= opts.Wait || netfilter.IsNotInstalled(err) || netfilter.IsPermission(err) {
			break
		}
		if serr := opts.Sleep(ctx, opts.Poll); serr != nil {
			return nil, fmt.Errorf("waiting for kube-proxy's first sync: %w", serr)
		}
	}
	exp := BackendState{Backend: opts.Expect, Expected: true, Live: live}
	if err != nil {
		exp.ReadError = err.Error()
		res.Findings = append(res.Findings, Finding{Kind: KindReadError, Backend: opts.Expect,
			Message: fmt.Sprintf("cannot read %s: %v", opts.Expect, err),
			Fix:     "run as root on the node; check that the " + string(opts.Expect) + " tools and kernel support are present (rke2-proxy-backend detect)"})
	} else {
		exp.Complete = len(missing) == 0
		res.Findings = append(res.Findings, missing...)
		if layoutNote != "" {
			res.Notes = append(res.Notes, layoutNote)
		}
		if !res.Synced && opts.Wait > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("waited %s for kube-proxy's first sync in %s", opts.Wait, opts.Expect))
		}
	}
	fillOwned(&exp, opts.Expect, live)
	res.Backends = append(res.Backends, exp)
	for _, b := range backend.All {
		if b == opts.Expect {
			continue
		}
		st := BackendState{Backend: b}
		rs, err := opts.Reader.Read(ctx, b)
		if err != nil {
			// A backend the kernel cannot run holds no rules; say so, do not fail.
			st.ReadError = err.Error()
			res.Notes = append(res.Notes, fmt.Sprintf("could not read %s (not checked for stranded rules): %v", b, err))
			res.Backends = append(res.Backends, st)
			continue
		}
		fillOwned(&st, b, rs)
		res.Findings = append(res.Findings, strandedFindings(opts.Expect, st)...)
		res.Backends = append(res.Backends, st)
	}
	// Kubelet's hint counts against kube-proxy's backend, wherever it is.
	res.Findings = append(res.Findings, hintFindings(opts.Expect, res.Backends)...)
	if opts.ProxyModeURL != "" {
		mode, note := proxyMode(ctx, opts.ProxyModeURL)
		res.ProxyMode = mode
		if note != "" {
			res.Notes = append(res.Notes, note)
		} else if mode != opts.Expect.ProxyMode() {
			res.Findings = append(res.Findings, Finding{Kind: KindProxyMode, Backend: opts.Expect,
				Message: fmt.Sprintf("kube-proxy reports proxy mode %q, the plan wants %q", mode, opts.Expect.ProxyMode()),
				Fix:     "restart RKE2 so kube-proxy reads /etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml: systemctl restart rke2-server (rke2-agent on agents)"})
		}
	}
	res.OK = len(res.Findings) == 0
	res.Duration = time.Since(start)
	return res, nil
}

func fillOwned(st *BackendState, b backend.Backend, rs *rules.Ruleset) {
	o := expected.FindOwned(rs, b == backend.NFTables)
	st.Owned = &o
	st.KubeProxyChains = len(o.Chains)
	st.KubeProxyRules = o.Rules
	for _, h := range o.KubeletHints {
		st.KubeletHints = append(st.KubeletHints, h.String())
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
