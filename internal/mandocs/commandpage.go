package mandocs

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli/help"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
)

// header is what every page's .TH line shares.
type header struct {
	date, source, manual string
}

// ConfigPage is the section-5 page of the operator config.
const ConfigPage = "rke2-proxy-backend-config"

// pageName is a command's page: "rke2-proxy-backend-render-live".
func pageName(cmd *cobra.Command) string { return strings.ReplaceAll(cmd.CommandPath(), " ", "-") }

// documented are the commands that get a page: what a user can run, not
// cobra's help and completion machinery.
func documented(cmd *cobra.Command) bool {
	return cmd.IsAvailableCommand() && !cmd.IsAdditionalHelpTopicCommand() || !cmd.HasParent()
}

func commandPage(cmd *cobra.Command, h header) string {
	var r roff
	key := cli.CommandKey(cmd)
	r.th(strings.ToUpper(pageName(cmd)), "1", h.date, h.source, h.manual)

	r.sh("NAME")
	r.line(escape(pageName(cmd)) + ` \- ` + escape(cmd.Short))

	r.sh("SYNOPSIS")
	r.line(".nf")
	use := strings.TrimSpace(strings.TrimPrefix(cmd.UseLine(), cmd.CommandPath()))
	if len(subcommands(cmd)) > 0 {
		use += " command [flags]"
	}
	r.line(bold(cmd.CommandPath()) + " " + escape(use))
	r.line(".fi")

	r.sh("DESCRIPTION")
	help.Fill(cmd)
	long := cmd.Long
	if long == "" {
		long = cmd.Short + "."
	}
	r.prose(long)

	if subs := subcommands(cmd); len(subs) > 0 {
		r.sh("COMMANDS")
		for _, s := range subs {
			r.item(ref(pageName(s), "1"), escape(s.Short))
		}
	}

	if fs := cmd.NonInheritedFlags(); hasVisible(fs) {
		r.sh("OPTIONS")
		flags(&r, fs)
	}
	if fs := cmd.InheritedFlags(); hasVisible(fs) {
		r.sh("GLOBAL OPTIONS")
		flags(&r, fs)
	}

	r.sh("EXIT STATUS")
	for _, e := range exitStatusOf(key) {
		r.item(bold(fmt.Sprint(e.code)), escape(e.text))
	}

	var envs []envDoc
	for _, e := range environment() {
		if uses(key, e.usedBy) {
			envs = append(envs, e)
		}
	}
	r.sh("ENVIRONMENT")
	for _, e := range envs {
		r.item(bold(e.name), escape(e.text))
	}

	var fl []fileDoc
	for _, f := range files {
		if uses(key, f.usedBy) {
			fl = append(fl, f)
		}
	}
	if len(fl) > 0 {
		r.sh("FILES")
		for _, f := range fl {
			r.item(pathTerm(f.path), escape(f.text))
		}
	}

	r.sh("SEE ALSO")
	r.line(strings.Join(seeAlso(cmd), ",\n"))
	return r.String()
}

func subcommands(cmd *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	for _, s := range cmd.Commands() {
		if documented(s) {
			out = append(out, s)
		}
	}
	return out
}

func hasVisible(fs *pflag.FlagSet) bool {
	visible := false
	fs.VisitAll(func(f *pflag.Flag) { visible = visible || !f.Hidden && f.Name != "help" })
	return visible
}

// flags lists options as "-o, --output format", the help text, and the
// default when it says more than the zero value.
func flags(r *roff, fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == "help" {
			return
		}
		name, usage := pflag.UnquoteUsage(f)
		if v, ok := valueNames[f.Name]; ok {
			name = v
		}
		term := bold("--" + f.Name)
		if f.Shorthand != "" {
			term = bold("-"+f.Shorthand) + ", " + term
		}
		if name != "" && name != "bool" {
			term += " " + italic(name)
		}
		text := configDefault(usage)
		if !zeroDefault(f) && !strings.Contains(usage, "default") {
			text += fmt.Sprintf(" (default: %s)", f.DefValue)
		}
		r.item(term, escape(text))
	})
}

// configDefault spells out defaults that come from the operator config:
// "(default: verify.wait from the config)" becomes "(default: verify.wait
// from the config; 5m when the config does not set it)", so a reader sees
// the value rather than the flag's own zero.
func configDefault(usage string) string {
	for _, k := range config.Keys() {
		ref := "default: " + k.Path + " from the config"
		if i := strings.Index(usage, ref); i >= 0 {
			end := i + len(ref)
			usage = usage[:end] + "; " + k.Default + " when the config does not set it" + usage[end:]
		}
	}
	return usage
}

// valueNames name a flag's value by what it is rather than by its Go type
// ("--config file", not "--config string"); the same flag name means the
// same thing on every command.
var valueNames = map[string]string{
	"backend":      "backend",
	"expect":       "backend",
	"config":       "file",
	"root":         "dir",
	"output":       "format",
	"kubernetes":   "version",
	"family":       "family",
	"services":     "n",
	"textfile-dir": "dir",
	"wait":         "duration",
}

// zeroDefault mirrors pflag's rule for when "--help" shows no default.
func zeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "0", "0s", "false", "[]", "<nil>":
		return true
	}
	return false
}

func seeAlso(cmd *cobra.Command) []string {
	var out []string
	if cmd.HasParent() {
		out = append(out, ref(pageName(cmd.Parent()), "1"))
	}
	for _, s := range subcommands(cmd) {
		out = append(out, ref(pageName(s), "1"))
	}
	out = append(out, ref(ConfigPage, "5"))
	extra := map[string][]string{
		"generate": {"systemd.generator(7)"},
		"verify":   {"iptables-save(8)", "nft(8)"},
		"cleanup":  {"iptables-restore(8)", "nft(8)"},
		"render":   {"iptables-save(8)", "nft(8)"},
	}[cli.CommandKey(cmd)]
	if !cmd.HasParent() {
		extra = []string{"systemd.generator(7)", "iptables(8)", "nft(8)"}
	}
	sort.Strings(extra)
	for _, e := range extra {
		name, section, _ := strings.Cut(strings.TrimSuffix(e, ")"), "(")
		out = append(out, ref(name, section))
	}
	return out
}
