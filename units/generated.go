package units

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// File is one generated file; Path is relative to the generator's output
// directory ("rke2-server.service.d/50-rke2-proxy-backend.conf").
type File struct {
	Path string
	Data []byte
}

// Input is everything the generated drop-ins depend on, already decided.
type Input struct {
	Backend backend.Backend
	// Units are the RKE2 service units installed on the host.
	Units []string
	// VerifyWait is verify.wait from the operator config (0: the default).
	VerifyWait time.Duration
	// ConfigFile is the operator config file to hand to apply and verify;
	// "" means the default, which is then left off the command lines.
	ConfigFile string
	// Binary is the installed tool's path the drop-ins run; "" means
	// hostfs.Binary (the packages' /usr/bin). The generator passes its own
	// resolved executable, so a tarball install under another prefix runs
	// the binary it installed.
	Binary string
	// WatchPartOf is the one RKE2 unit the watch unit restarts and stops
	// with (PartOf=), "" for none: the enabled one. Never both: RKE2's
	// older units conflict with each other, and a watch that is PartOf=
	// both gets a restart and a stop job in one transaction.
	WatchPartOf string
	// Undecided is set when the operator config is broken, so there is no
	// decision (Backend is empty): the RKE2 units still run apply, which
	// then fails naming the file, key and value and RKE2 does not start, so
	// a drop-in from an earlier boot is never used silently. No verify.
	Undecided bool
}

// DefaultVerifyWait matches the shipped unit's ExecStart.
const DefaultVerifyWait = 5 * time.Minute

// Generate renders the drop-ins for in: one per RKE2 unit, which records the
// decision, runs apply before RKE2 starts and pulls in the verify unit, one
// for the verify unit with the configured wait, and one making the watch
// unit PartOf= in.WatchPartOf when set. Files come out sorted by
// path, so the same input gives the same bytes.
func Generate(in Input) ([]File, error) {
	if in.Undecided {
		in.Backend = ""
	} else if _, err := backend.Parse(string(in.Backend)); err != nil {
		return nil, err
	}
	if in.Binary != "" && !path.IsAbs(in.Binary) {
		// ExecStartPre= runs before any PATH could find a bare name.
		return nil, fmt.Errorf("the binary the drop-ins run, %q, is not an absolute path", in.Binary)
	}
	names, err := unitNames(in.Units)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, nil
	}
	if in.Undecided {
		applyOnly, err := undecidedOptions(in)
		if err != nil {
			return nil, err
		}
		var files []File
		for _, n := range names {
			files = append(files, File{Path: dropInPath(n), Data: render(applyOnly)})
		}
		return files, nil
	}
	rke2DropIn, err := rke2Options(in)
	if err != nil {
		return nil, err
	}
	verifyDropIn, err := verifyOptions(in)
	if err != nil {
		return nil, err
	}
	files := []File{{Path: dropInPath(VerifyUnit), Data: render(verifyDropIn)}}
	if in.WatchPartOf != "" {
		if !slices.Contains(names, in.WatchPartOf) {
			return nil, fmt.Errorf("watch's PartOf= unit %q is not one of the RKE2 units %v", in.WatchPartOf, names)
		}
		files = append(files, File{Path: dropInPath(WatchUnit), Data: render([]option{
			opt("Unit", "PartOf", in.WatchPartOf),
		})})
	}
	for _, n := range names {
		files = append(files, File{Path: dropInPath(n), Data: render(rke2DropIn)})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// binary is the tool the drop-ins run.
func (in Input) binary() string {
	if in.Binary == "" {
		return hostfs.Binary
	}
	return in.Binary
}

func dropInPath(unitName string) string { return path.Join(unitName+".d", hostfs.UnitDropInName) }

// unitNames validates, sorts and de-duplicates the unit names: each becomes
// a directory name in the generator's output, so nothing path-like passes.
func unitNames(in []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, n := range in {
		if !ValidUnitName(n) {
			return nil, fmt.Errorf("RKE2 unit name %q is not a plain service unit name", n)
		}
		if n == VerifyUnit {
			return nil, fmt.Errorf("unit %q is ours, not RKE2's", n)
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// commonFlags are the global flags both apply and verify get.
func commonFlags(in Input) []string {
	if in.ConfigFile == "" {
		return nil
	}
	return []string{"--config=" + in.ConfigFile}
}

func rke2Options(in Input) ([]option, error) {
	env, err := EnvironmentValue(hostfs.EnvDecision, string(in.Backend))
	if err != nil {
		return nil, err
	}
	argv := append([]string{in.binary(), "apply", "--backend=" + string(in.Backend)}, commonFlags(in)...)
	exec, err := ExecLine(argv)
	if err != nil {
		return nil, fmt.Errorf("apply command line: %w", err)
	}
	return []option{
		// verify orders itself After= the RKE2 units; Wants= only pulls it
		// in, so a failed verify never stops RKE2.
		opt("Unit", "Wants", VerifyUnit),
		opt("Service", "Environment", env),
		// No "-" prefix: apply itself decides (on_failure) whether a
		// problem may stop RKE2's start.
		opt("Service", "ExecStartPre", exec),
	}, nil
}

// undecidedOptions run apply without a backend: it loads the (broken)
// config itself and exits 2 naming the problem, which stops RKE2's start.
// Nothing pulls in verify, which would only report that there is no plan.
func undecidedOptions(in Input) ([]option, error) {
	argv := append([]string{in.binary(), "apply"}, commonFlags(in)...)
	exec, err := ExecLine(argv)
	if err != nil {
		return nil, fmt.Errorf("apply command line: %w", err)
	}
	return []option{opt("Service", "ExecStartPre", exec)}, nil
}

func verifyOptions(in Input) ([]option, error) {
	wait := in.VerifyWait
	if wait <= 0 {
		wait = DefaultVerifyWait
	}
	argv := append([]string{in.binary(), "verify", "--wait=" + wait.String()}, commonFlags(in)...)
	exec, err := ExecLine(argv)
	if err != nil {
		return nil, fmt.Errorf("verify command line: %w", err)
	}
	return []option{
		// An empty ExecStart= clears the shipped one before ours is added.
		opt("Service", "ExecStart", ""),
		opt("Service", "ExecStart", exec),
	}, nil
}

// option is one setting of a unit file's section.
type option struct{ section, name, value string }

func opt(section, name, value string) option { return option{section, name, value} }

// render writes opts after Header the way systemd reads a unit file: each
// section's header once, in the order first named, its settings under it in
// the order given, a blank line between sections. Values go out as given:
// escape.go makes them safe first. It is written here rather than taken from
// go-systemd's unit package, whose init (a formatted error) every boot paid
// for in the generator; the tests read the files back with that package.
func render(opts []option) []byte {
	out := []byte(Header)
	var done []string
	for _, first := range opts {
		if slices.Contains(done, first.section) {
			continue
		}
		if len(done) > 0 {
			out = append(out, '\n')
		}
		done = append(done, first.section)
		out = append(out, "["+first.section+"]\n"...)
		for _, o := range opts {
			if o.section == first.section {
				out = append(out, o.name+"="+o.value+"\n"...)
			}
		}
	}
	return out
}
