// Package proof says what a verify run proved about the node, in every
// form the node says it in: status.json (and verify -o json), the textfile
// metrics, node-problem-detector's verdict, the node-feature-discovery
// labels, the Node condition and annotations, and watch's drift and fleet
// metrics. A run's State is computed once (Of) and every form is drawn
// from it; only node-problem-detector's plugin (Check) reads the status
// back from disk. Judging is internal/verify's and proving the host
// internal/prove's: proof only says, and is the one writer of these.
package proof

import (
	"errors"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostplan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/verify"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

// State is what one run says about the node.
type State struct {
	Root hostfs.Root
	// Result is the run's; nil when it left none, and NoResult says why
	// (set too when the result could not be stored: no run's stands then).
	Result   *verify.Result
	NoResult string
	// At is when the run ended.
	At time.Time
	// Verdict is check's verdict on the run, in check's words: the Node
	// condition's, so it and node-problem-detector's never tell different
	// stories.
	Verdict Verdict
	// Proven is set when the run proved Backend (check says ok and verify
	// verified a backend).
	Proven  bool
	Backend string
	// Mode and Source are kube-proxy's proxy mode (as it reported it, else
	// as RKE2 was given it) and the setting that decided it.
	Mode, Source string
	Version      string
	// K138 is whether the node keeps its backend on kube-proxy 1.38.
	K138 Readiness138
	// LegacyFree is the last census as the Node annotation says it
	// (LegacyFreeValue), set by watch; "" while none ran: the annotation
	// is then left as it is.
	LegacyFree string
	// The plan the verdict was judged against, read once per run.
	plan    plan.Plan
	planErr error
}

// Of is what a run that ended at at says: res, or, when res is nil, that
// it left none (why). It reads the plan once, for the verdict and the
// fleet view.
func Of(root hostfs.Root, res *verify.Result, why string, at time.Time) State {
	s := State{Root: root, Result: res, NoResult: why, At: at, Version: version.Version}
	s.plan, s.planErr = plan.Read(root)
	// The mode and source of what RKE2 was given, never of a plan apply
	// could not carry out (the verdict says that one is unknown).
	if s.planErr == nil {
		switch {
		case s.plan.Carried():
			s.Mode, s.Source = s.plan.Applied.ProxyMode, s.plan.Decision.Source
		case s.plan.AppliedBackend() != "":
			s.Mode = s.plan.Applied.ProxyMode // an earlier run's drop-in: who decided it is not recorded
		}
	}
	if res != nil && res.ProxyMode != "" {
		s.Mode = res.ProxyMode // what kube-proxy said it runs
	}
	s.judge()
	s.K138 = Readiness138Of(s.Result)
	return s
}

// judge sets the verdict, as check would give it on s once stored.
func (s *State) judge() {
	v, judged := planVerdict(s.Root, s.plan, s.planErr)
	switch {
	case judged:
	case s.Result == nil || s.NoResult != "":
		v = noResult(s.NoResult)
	default:
		v = resultVerdict(s.plan.AppliedBackend(), s.Result)
	}
	s.Verdict = tidy(v)
	res := s.Result
	s.Proven = v.Status == OK && s.NoResult == "" && res != nil && res.OK && res.Verdict == verify.VerdictOK && res.Expect != ""
	s.Backend = ""
	if s.Proven {
		s.Backend = string(res.Expect)
	}
}

// Outputs are where a run's State is stored on the node.
type Outputs struct {
	// TextfileDir is node_exporter's textfile directory ("": none).
	TextfileDir string
	// Run is the run's mark (BeginRun), ended once status.json says what
	// the run left.
	Run *StoreRun
	// Features publishes the node-feature-discovery labels, valid for
	// FeatureTTL (0: DefaultFeatureTTL); off, ours are removed. Their
	// kernel labels probe the node as Distribution (distro.Find's kind).
	Features     bool
	FeatureTTL   time.Duration
	Distribution distro.Kind
}

// Store writes s: the textfile metrics and status.json, or, for a run
// that left no result, a status saying why (no earlier result stands for
// the node then); ends the run's mark; then renews the node-feature
// labels (removes them without a result). Metrics that cannot be written
// are removed, so the textfile never shows an older run's values; the
// status is written whatever happened to the metrics, with a note when
// they were not. A result that cannot be stored makes s say so.
func (s *State) Store(o Outputs) error {
	if s.Result == nil {
		err := Invalidate(s.Root, s.NoResult)
		return errors.Join(err, o.Run.End(err), RemoveFeatures(s.Root))
	}
	note, err := WriteMetrics(s.Root, o.TextfileDir, s.Result, s.At)
	if err != nil {
		note = "metrics not written: " + err.Error()
	}
	if note != "" {
		s.Result.Notes = append(s.Result.Notes, note)
	}
	if serr := WriteStatus(s.Root, s.Result); serr != nil {
		s.NoResult = serr.Error()
		s.judge()
		err = errors.Join(err, serr)
	}
	return errors.Join(err, o.Run.End(err), s.storeFeatures(o))
}

// storeFeatures writes s as the node's NFD labels, or removes ours when
// the operator turned them off (labels nobody renews must not stay).
func (s *State) storeFeatures(o Outputs) error {
	if !o.Features {
		return RemoveFeatures(s.Root)
	}
	ttl := o.FeatureTTL
	if ttl <= 0 {
		ttl = DefaultFeatureTTL
	}
	return WriteFeatures(s.Root, func() Features {
		return featuresOf(s.Result, hostplan.ProbeCapable(s.Root, distro.Find(s.Root, o.Distribution).Kind))
	}, s.At, ttl)
}
