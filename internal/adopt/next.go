package adopt

import (
	"fmt"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/facts"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// What the generator would do next, compared with what runs: the same pure
// decision the generator makes, on the facts it will see.

// generatorView is the facts the generator sees at a daemon-reload or a
// boot: no live rules (it never reads the kernel), and the plan this boot
// recorded (previous, "" at a boot).
func generatorView(f facts.Facts, previous backend.Backend) facts.Facts {
	f.LiveRules = facts.LiveRules{KubeProxy: []string{}, KubeletHint: []string{}}
	f.PreviousPlan = string(previous)
	return f
}

func nextChoices(f facts.Facts, c config.Config, b backend.Backend) (start, boot Choice) {
	return choice(decide.Decide(generatorView(f, b), c)), choice(decide.Decide(generatorView(f, ""), c))
}

func choice(d decide.Decision) Choice {
	return Choice{Backend: d.Backend, Disabled: d.Disabled, Source: d.Source, Reasons: d.Reasons}
}

// differences are the sentences an operator must read before RKE2's next
// start or the next boot.
func differences(p distro.Profile, b backend.Backend, start, boot Choice) []string {
	var out []string
	switch {
	case start.Disabled:
		out = append(out, fmt.Sprintf("At %s's next start rke2-proxy-backend is off (source %s: %s) and kube-proxy starts on %s's own defaults, which may not be %s.",
			p.Name, start.Source, strings.Join(start.Reasons, " "), p.Name, b))
	case start.Backend != b:
		out = append(out, fmt.Sprintf("At %s's next start the generator would switch kube-proxy from %s to %s (source %s: %s) and %s's rules would be left stranded. "+
			"To keep %s, %s before %s restarts; to move on purpose, run `rke2-proxy-backend switch --to %s` (it restarts %s, cleans up %s and verifies, rolling back on failure).",
			p.Name, b, start.Backend, start.Source, strings.Join(start.Reasons, " "), b, b, keepHint(p, start.Source, b), p.Name, start.Backend, p.Name, b))
	}
	if !boot.Disabled && boot.Backend != b && boot.Backend != start.Backend {
		out = append(out, fmt.Sprintf("At the next boot (no plan in /run, no rules yet) the generator would choose %s instead of %s (source %s: %s) To keep %s across reboots, set backend: %s in %s.",
			boot.Backend, b, boot.Source, strings.Join(boot.Reasons, " "), b, b, hostfs.ConfigFile))
	}
	return out
}

// keepHint says how to undo the setting that would switch the backend.
func keepHint(p distro.Profile, source string, b backend.Backend) string {
	switch source {
	case config.SourceCmdline:
		return "remove rke2.proxy_backend= from the kernel command line (or make it " + string(b) + ")"
	case config.SourceEnv:
		return "unset RKE2_PROXY_BACKEND (or make it " + string(b) + ")"
	case decide.SourceRKE2Config:
		where := "proxy-mode / IPTABLES_MODE"
		if p.KubeProxyEmbedded {
			where = "proxy-mode (config) / IPTABLES_MODE (unit)"
		}
		return "change " + p.Name + "'s own " + where + " settings to " + string(b) + "'s (or set respect_rke2_config: false)"
	}
	return fmt.Sprintf("set backend: %s (or auto) in %s", b, hostfs.ConfigFile)
}
