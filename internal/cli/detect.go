package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/apply"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostconflict"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

func init() { register(newDetectCommand) }

func newDetectCommand(g *globals) *cobra.Command {
	return flagsOnly("detect", "Show the host facts, the backend decision and its reasons", helpText("detect"), func(cmd *cobra.Command) error {
		f, c, d, err := g.loadDecision(facts.Options{LiveRules: true, ToolVersions: true, HostServices: true})
		if err != nil {
			return err
		}
		conflicts := hostconflict.Find(f, d.Backend)
		manifests, err := apply.CNIManifests(f, d)
		if err != nil {
			return failure("render the CNI's HelmChartConfig: %w", err)
		}
		if g.json() {
			err = writeDetectJSON(g.stdout, f, c, d, conflicts, manifests)
		} else {
			err = writeDetectText(g.stdout, f, c, d, conflicts, manifests)
		}
		if err != nil {
			return failure("write output: %w", err)
		}
		if len(f.Unreadable) > 0 {
			return usageError(errors.New("some host sources exist but cannot be read, so the decision may rest on a guess:\n  " +
				strings.Join(f.Unreadable, "\n  ")))
		}
		return nil
	})
}

// detectSchema versions detect's JSON document for scripts: raise it when a
// key is removed, renamed or changes type; adding keys does not raise it.
const detectSchema = 1

// detectOutput is detect's JSON document (DESIGN.md's contract, plus the
// schema version and the effective settings the decision was made with).
type detectOutput struct {
	Schema   int             `json:"schema"`
	Facts    facts.Facts     `json:"facts"`
	Settings detectSettings  `json:"settings"`
	Decision decide.Decision `json:"decision"`
	// HostConflicts is never null: scripts count it.
	HostConflicts []hostconflict.Finding `json:"host_conflicts"`
	CNIManifests  []apply.CNIManifest    `json:"cni_manifests,omitempty"`
}

// detectSettings is the effective config as an operator writes it: the
// embedded Config brings every key (new ones included), and the shallower
// Verify field wins in encoding/json, so verify.wait reads "5m" rather
// than a count of nanoseconds.
type detectSettings struct {
	config.Config
	Verify detectVerify `json:"verify"`
}

type detectVerify struct {
	Wait        string `json:"wait"`
	TextfileDir string `json:"textfile_dir"`
}

func writeDetectJSON(w io.Writer, f facts.Facts, c config.Config, d decide.Decision, conflicts []hostconflict.Finding, manifests []apply.CNIManifest) error {
	if conflicts == nil {
		conflicts = []hostconflict.Finding{}
	}
	settings := detectSettings{Config: c, Verify: detectVerify{Wait: durationText(c.Verify.Wait), TextfileDir: c.Verify.TextfileDir}}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(detectOutput{Schema: detectSchema, Facts: f, Settings: settings, Decision: d, HostConflicts: conflicts, CNIManifests: manifests})
}

// durationText writes a duration as an operator would ("5m", "1h30m",
// "90s" stays "1m30s"): time.Duration.String without the zero units it
// pads with, still readable by time.ParseDuration.
func durationText(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// writeDetectText is the short human view: the decision, numbered reasons,
// what was refused or kept, then the handful of facts the reasons lean on.
func writeDetectText(w io.Writer, f facts.Facts, c config.Config, d decide.Decision, conflicts []hostconflict.Finding, manifests []apply.CNIManifest) error {
	var b strings.Builder
	if d.Disabled {
		fmt.Fprintf(&b, "backend: none, rke2-proxy-backend leaves kube-proxy alone (source: %s)\n", d.Source)
	} else {
		fmt.Fprintf(&b, "backend: %s (source: %s)\n", d.Backend, d.Source)
		settings := append(append([]string{}, d.KubeProxyArgs...), d.KubeProxyEnv...)
		if len(settings) == 0 {
			settings = []string{"nothing to add"}
		}
		fmt.Fprintf(&b, "kube-proxy: %s\n", strings.Join(settings, " "))
	}
	b.WriteString("\nreasons:\n")
	for i, r := range d.Reasons {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, r)
	}
	detectList(&b, "refused", d.Refused)
	detectList(&b, "kept from RKE2's config", d.Respected)
	b.WriteString("\nfacts:\n")
	detectFact(&b, "kernel", detectKernelText(f.Kernel))
	detectFact(&b, "iptables", detectOrUnknown(f.Userspace.IptablesAlternative)+detectPathSuffix(f.Userspace.IptablesPath))
	detectFact(&b, "legacy tables", detectLegacyText(f.Userspace))
	detectFact(&b, "live rules", detectLiveText(f.LiveRules))
	detectCostFact(&b, f)
	detectFact(&b, "rke2", detectRKE2Text(f.RKE2))
	detectFact(&b, "cni", detectCNIText(f.RKE2.CNI))
	configText := "defaults (no " + hostfs.ConfigFile + ")"
	if c.File != "" {
		configText = c.File
	}
	detectFact(&b, "config", configText)
	writeDetectHost(&b, conflicts, manifests)
	detectList(&b, "problems", f.Problems)
	detectList(&b, "unreadable", f.Unreadable)
	_, err := io.WriteString(w, b.String())
	return err
}

func detectList(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	for _, it := range items {
		fmt.Fprintf(b, "  - %s\n", it)
	}
}

func detectFact(b *strings.Builder, name, value string) {
	fmt.Fprintf(b, "  %-14s %s\n", name+":", value)
}

func detectKernelText(k facts.Kernel) string {
	s := detectOrUnknown(k.Release)
	if k.ConfigSource != "" {
		return s + ", config " + k.ConfigSource
	}
	return s + ", no kernel config found"
}

func detectLegacyText(u facts.Userspace) string {
	if len(u.LegacyTablesIPv4)+len(u.LegacyTablesIPv6) == 0 {
		return "none"
	}
	return fmt.Sprintf("ipv4 %s; ipv6 %s", detectOrNone(u.LegacyTablesIPv4), detectOrNone(u.LegacyTablesIPv6))
}

func detectLiveText(l facts.LiveRules) string {
	if !l.Probed {
		return "not probed"
	}
	s := "kube-proxy in " + detectOrNone(l.KubeProxy)
	return s + "; kubelet hint in " + detectOrNone(l.KubeletHint)
}

func detectRKE2Text(r facts.RKE2) string {
	if r.Version == "" && len(r.Units) == 0 {
		return "not installed"
	}
	s := detectOrUnknown(r.Version)
	if r.VersionSource != "" {
		s += " (from " + r.VersionSource + ")"
	}
	if r.ConfigFile != "" {
		s += ", config " + r.ConfigFile
	}
	return s
}

func detectOrUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func detectOrNone(items []string) string {
	if len(items) == 0 {
		return "none"
	}
	return strings.Join(items, ", ")
}

func detectPathSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " (" + p + ")"
}
