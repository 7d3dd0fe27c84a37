package prove

import (
	"github.com/spf13/pflag"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeproxy"
)

// Register adds the flags verify and watch share to fs, parsed into f;
// wait says what --wait means for the command. Given fills in which of the
// flags with a config default were set, once fs is parsed.
func (f *Flags) Register(fs *pflag.FlagSet, wait string) {
	fs.DurationVar(&f.Wait, "wait", 0, wait)
	fs.StringVar(&f.Claim.Backend, "expect", "", "expected backend, instead of the plan's: "+backend.Names())
	fs.StringVar(&f.Claim.Kubernetes, "kubernetes", "", "Kubernetes version, e.g. v1.33 (default: the plan's, else any known layout)")
	fs.StringVar(&f.TextfileDir, "textfile-dir", "", "node_exporter textfile directory (default: verify.textfile_dir from the config)")
	fs.StringVar(&f.ProxyModeURL, "proxy-mode-url", "", `kube-proxy's /proxyMode URL (default: where RKE2's kube-proxy-arg metrics-bind-address puts it, else `+kubeproxy.DefaultProxyModeURL+`; "" skips the check)`)
	fs.BoolVar(&f.NoStatus, "no-status", false, "write neither "+hostfs.StatusFile+" nor metrics")
	_ = fs.MarkHidden("proxy-mode-url")
}

// Given is f with WaitSet, TextfileDirSet and ProxyModeURLSet saying
// whether fs's command line set them (an empty or zero value given on
// purpose overrides the config, a flag left out does not), and with d,
// the root command's --distribution ("": find it).
func (f Flags) Given(fs *pflag.FlagSet, d distro.Kind) Flags {
	f.WaitSet, f.TextfileDirSet, f.ProxyModeURLSet = fs.Changed("wait"), fs.Changed("textfile-dir"), fs.Changed("proxy-mode-url")
	f.Distribution = d
	return f
}
