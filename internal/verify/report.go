package verify

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the short human report: the verdict, one line per
// backend, then each finding with the command that fixes it. It is
// written at once, so the code stays linear and the first error counts.
func WriteText(w io.Writer, r *Result) error {
	verdict := map[string]string{VerdictOK: "OK", VerdictFailed: "FAILED", VerdictUnknown: "CANNOT TELL"}[r.Verdict]
	var out strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&out, format, args...) }
	if r.Expect == "" {
		p("verify: %s: nothing says which backend kube-proxy should use\n", verdict)
	} else {
		kube := r.Kubernetes
		if kube == "" {
			kube = "unknown (newest layout)"
		}
		p("verify: %s: kube-proxy should use %s (from %s), Kubernetes %s\n", verdict, r.Expect, r.ExpectSource, kube)
	}
	for _, b := range r.Backends {
		p("  %-16s %s\n", string(b.Backend)+":", backendLine(b))
	}
	if r.ProxyMode != "" {
		p("  %-16s %s\n", "proxy mode:", r.ProxyMode)
	}
	for _, n := range r.Notes {
		p("note: %s\n", n)
	}
	for _, f := range r.Warnings {
		p("warning: [%s] %s\n   fix: %s\n", f.Kind, f.Message, f.Fix)
	}
	for i, f := range r.Findings {
		p("%d. [%s] %s\n   fix: %s\n", i+1, f.Kind, f.Message, f.Fix)
	}
	_, err := io.WriteString(w, out.String())
	return err
}

func backendLine(b BackendState) string {
	switch {
	case b.ReadError != "":
		return "not readable: " + b.ReadError
	case b.Expected && b.Complete:
		return fmt.Sprintf("kube-proxy skeleton complete (%d kube-proxy chains, %d rules)", b.KubeProxyChains, b.KubeProxyRules)
	case b.Expected:
		return "kube-proxy skeleton INCOMPLETE"
	case b.KubeProxyChains > 0 && b.strays != "":
		return fmt.Sprintf("STRANDED: %d chains, %d rules of %s", b.KubeProxyChains, b.KubeProxyRules, b.strays)
	case b.KubeProxyChains > 0:
		return fmt.Sprintf("STRANDED: %d kube-proxy chains, %d rules", b.KubeProxyChains, b.KubeProxyRules)
	}
	return "no kube-proxy rules"
}
