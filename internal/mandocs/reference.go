package mandocs

import (
	"path"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/config"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/proof"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/units"
)

// The reference sections (EXIT STATUS, FILES, ENVIRONMENT) are facts about
// the whole program that cobra's tree does not carry. Commands are named by
// their path without the program name ("render live"); the main page, key
// "", lists everything.

// GeneratorPath is where packaging links the binary as a systemd generator.
const GeneratorPath = "/usr/lib/systemd/system-generators/" + cli.GeneratorName

// readsConfig are the commands that load the operator config.
var readsConfig = []string{"detect", "apply", "verify", "generate"}

type exitDoc struct {
	code int
	text string
}

const usageText = "Usage or configuration error: an unknown flag or value, an explicit --config that does not exist, " +
	"an invalid operator config (the message names the file, key and value), or -o json on a command without a JSON form."

// exitStatus lists each command's exit codes in its own words.
var exitStatus = map[string][]exitDoc{
	"": {
		{cli.ExitOK, "Success."},
		{cli.ExitFailure, "A runtime failure, or verify found a problem (see each command's page)."},
		{cli.ExitUsage, usageText},
		{cli.ExitCannotTell, "verify only: cannot tell whether kube-proxy is right (see rke2-proxy-backend-verify(1))."},
	},
	"detect": {
		{cli.ExitOK, "The backend was decided."},
		{cli.ExitUsage, usageText + " Also when a host source exists but cannot be read: facts and decision are still printed, then the unreadable sources on standard error."},
	},
	"apply": {
		{cli.ExitOK, "The plan was applied; or it could not be honoured and on_failure is warn, so RKE2 starts on its own defaults (a warning is logged)."},
		{cli.ExitFailure, "The plan could not be honoured and on_failure is block, so systemd does not start RKE2; or a write failed."},
		{cli.ExitUsage, usageText},
	},
	"verify": {
		{cli.ExitOK, "Every check holds, or rke2-proxy-backend is turned off (backend: off)."},
		{cli.ExitFailure, "Verification failed: a check found a problem (each finding is printed with the command that fixes it)."},
		{cli.ExitUsage, usageText},
		{cli.ExitCannotTell, "Cannot tell: nothing says which backend to expect (no plan and no --expect), or the expected backend cannot be read. Neither a pass nor a broken node."},
	},
	"generate": {
		{cli.ExitOK, "Always when systemd runs it: a generator never fails the boot; a problem is logged in one line and no drop-in is written."},
		{cli.ExitUsage, "Only when run by hand with bad arguments."},
	},
	"lint": {
		{cli.ExitOK, "Every file would be read as it is on a node (or, with no FILE, this node's file is absent: the built-in defaults)."},
		{cli.ExitUsage, "A file a node would refuse (one line each on standard error: FILE:LINE: the key, the value and what to do), a file that cannot be read, or a usage error."},
	},
	"cleanup": {
		{cli.ExitOK, "The stranded rules were removed, or there were none."},
		{cli.ExitFailure, "Refused (the plan says kube-proxy uses this backend and --force was not given), or the removal failed."},
		{cli.ExitUsage, usageText},
	},
}

func exitStatusOf(key string) []exitDoc {
	if e, ok := exitStatus[key]; ok {
		return e
	}
	return exitStatus[""]
}

type fileDoc struct {
	path, text string
	usedBy     []string
}

var files = []fileDoc{
	{hostfs.ConfigFile, "The operator config, see rke2-proxy-backend-config(5). When it is missing the built-in defaults apply; a file named with --config must exist.", append([]string{"lint"}, readsConfig...)},
	{"/proc/cmdline", "The kernel command line: rke2.proxy_backend=B overrides the backend for one boot.", readsConfig},
	{"/run/systemd/generator/rke2-server.service.d/" + hostfs.UnitDropInName, "Written by the generator for each installed RKE2 unit (rke2-agent.service likewise): the decision, apply as ExecStartPre= and Wants=" + units.VerifyUnit + ". The same name in /etc/systemd/system/<unit>.d/ replaces it.", []string{"generate"}},
	{"/run/systemd/generator/" + units.VerifyUnit + ".d/" + hostfs.UnitDropInName, "Written by the generator: verify's --wait from verify.wait.", []string{"generate"}},
	{hostfs.RKE2ConfigFile, "RKE2's own config. Read, never modified; RKE2_CONFIG_FILE moves it.", []string{"detect", "apply", "generate"}},
	{path.Dir(hostfs.RKE2ConfigFile) + "/config.yaml.d/" + rke2.DropInName, "The RKE2 config drop-in apply writes (mode 0600, atomically, with a generated header); it moves with RKE2_CONFIG_FILE as <RKE2 config>.d/" + rke2.DropInName + ".", []string{"apply"}},
	{hostfs.PlanFile, "The decision apply recorded this boot; read by verify, cleanup and the next generator run.", []string{"apply", "verify", "cleanup", "generate"}},
	{hostfs.StatusFile, "verify's last result.", []string{"verify"}},
	{hostfs.TextfileDir + "/" + proof.MetricsFile, "verify's Prometheus textfile metrics (the directory is verify.textfile_dir).", []string{"verify"}},
	{GeneratorPath, "The systemd generator: a link to the binary, which runs generate when called by this name.", []string{"generate"}},
	{hostfs.ShippedUnitDir + "/" + units.VerifyUnit, "The post-start check unit.", []string{"verify"}},
	{hostfs.ShippedUnitDir + "/" + units.WatchUnit, "The continuous check: re-verifies when the rules change and reports drift; enabled by the package.", []string{"watch"}},
	{hostfs.StatusFile, "The last result, written by watch as verify writes it.", []string{"watch"}},
	{hostfs.TextfileDir + "/" + proof.DriftMetricsFile, "watch's drift metrics, next to verify's (the directory is verify.textfile_dir).", []string{"watch"}},
	{hostfs.BenchFile, "bench's last measurement of each backend's rule-load cost; detect and prefer: [cheapest] read it.", []string{"bench", "detect"}},
}

type envDoc struct {
	name, text string
	usedBy     []string
}

func environment() []envDoc {
	keys := []string{}
	for _, k := range config.Keys() {
		if k.Env != config.EnvBackend {
			keys = append(keys, k.Env)
		}
	}
	return []envDoc{
		{hostfs.EnvRoot, "The default of --root.", nil},
		{config.EnvBackend, "auto, off or a backend name: overrides backend in the config file; the kernel command line overrides it.", readsConfig},
		{"RKE2_PROXY_BACKEND_<KEY>", "Overrides one more config key, named after its path in upper case: " + strings.Join(keys, ", ") + ". An empty value counts as unset; an unknown RKE2_PROXY_BACKEND_* variable is an error. See rke2-proxy-backend-config(5).", readsConfig},
		{hostfs.EnvDecision, "Set by the generator in the RKE2 unit's environment to record its decision; not a setting.", []string{"generate", "apply"}},
		{"RKE2_CONFIG_FILE", "RKE2's main config file, as RKE2 reads it from its unit's environment; the drop-in goes to its .d directory.", []string{"apply"}},
		{"SYSTEMD_IN_INITRD", "Set to 1 by systemd in the initrd, where the generator does nothing.", []string{"generate"}},
	}
}

// uses reports whether a command appears in usedBy; the main page and
// entries with no list take everything.
func uses(key string, usedBy []string) bool {
	if key == "" || usedBy == nil {
		return true
	}
	for _, u := range usedBy {
		if u == key {
			return true
		}
	}
	return false
}
