package help

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
)

// valueCompletions are the values the shells offer for a flag, by flag name.
// A flag name means the same thing on every subcommand, so one table serves
// the whole tree and a new subcommand's --backend completes without more code.
var valueCompletions = map[string]func(*pflag.Flag) []string{
	"backend": backendValues,
	"expect":  backendValues,
	"output":  func(*pflag.Flag) []string { return []string{"text", "json"} },
	"family":  func(*pflag.Flag) []string { return []string{"ipv4", "ipv6"} },
}

// backendValues are the backend names, plus "all" where the flag takes it
// (render live's --backend, whose default is all).
func backendValues(f *pflag.Flag) []string {
	out := make([]string, 0, len(backend.All)+1)
	for _, b := range backend.All {
		out = append(out, string(b))
	}
	if f.DefValue == "all" {
		out = append(out, "all")
	}
	return out
}

// Completions walks the command tree from cmd and registers the values of
// every flag in valueCompletions, on the command that defines it.
func Completions(cmd *cobra.Command) {
	register := func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			values, ok := valueCompletions[f.Name]
			if !ok {
				return
			}
			// The error only says "already registered", which a tree
			// built once cannot hit.
			_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(values(f), cobra.ShellCompDirectiveNoFileComp))
		})
	}
	register(cmd.LocalNonPersistentFlags())
	register(cmd.PersistentFlags())
	for _, sub := range cmd.Commands() {
		Completions(sub)
	}
}
