package facts

import (
	"context"
	"errors"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/boundexec"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// Asking the RKE2 binary. Its data directory appears only after RKE2's
// first start, which comes after apply (an ExecStartPre), and after an
// upgrade the newest data directory is still the old version until RKE2
// extracts the new one. Only the binary the unit runs knows the version
// RKE2 is about to start, so apply asks it; the generator never runs
// programs and keeps to files.

const (
	// rke2VersionTimeout bounds `rke2 --version`, which prints and exits
	// in milliseconds: a binary that hangs must not hold up RKE2's start.
	rke2VersionTimeout = 5 * time.Second
	// maxVersionOutput is far more than the two lines it prints.
	maxVersionOutput = 4096
)

var errNotExecutable = errors.New("not executable")

// rke2VersionLine is the first line of `rke2 --version`, e.g.
// "rke2 version v1.31.2+rke2r1 (a1b2c3d)", or k3s's, "k3s version
// v1.31.2+k3s1 (6da20424)": the same program underneath.
// Compiled on first use: only apply asks the binary.
var rke2VersionLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:rke2|k3s) version (v[0-9]{1,4}\.[0-9]{1,4}\.[0-9]{1,6}\+(?:rke2r|k3s)[0-9]{1,4})(?: |$)`)
})

// binaryVersion asks the binary of the first unit that names one (server
// first, as for the config file) for its version. ok is false, with the
// reason recorded, when there is no such binary or it gives no version.
func (p *probe) binaryVersion(units []RKE2Unit, timeout time.Duration) (version, source string, ok bool) {
	var unit RKE2Unit
	for _, u := range units {
		if u.Binary != "" {
			unit = u
			break
		}
	}
	if unit.Binary == "" {
		return "", "", false
	}
	bin := unit.Binary
	if !path.IsAbs(bin) {
		p.problem("%s runs %s, not an absolute path: its version cannot be asked; it is taken from %s's data directory.", unit.Name, bin, p.opts.Distribution.Name())
		return "", "", false
	}
	onDisk, err := p.hostExecutable(bin)
	if err != nil {
		switch {
		case isNotExist(err):
			p.problem("%s, which %s runs, is missing: %s's version is taken from its data directory.", bin, unit.Name, p.opts.Distribution.Name())
		case err == errNotExecutable:
			// systemd could not run it either; RKE2 is not (fully) installed.
			p.problem("%s, which %s runs, is not executable: %s's version is taken from its data directory.", bin, unit.Name, p.opts.Distribution.Name())
		default:
			p.unreadable("%s, which %s runs: %s: %s's version is taken from its data directory; reinstall %s", bin, unit.Name, errText(err), p.opts.Distribution.Name(), p.opts.Distribution.Name())
		}
		return "", "", false
	}
	first, err := firstVersionLine(onDisk, []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, timeout)
	if err != nil {
		// Neither its output nor its complaint is repeated: only what went wrong.
		p.unreadable("%s --version (the binary %s runs): %s: %s's version is taken from its data directory; check the binary", bin, unit.Name, runProblem(err), p.opts.Distribution.Name())
		return "", "", false
	}
	m := rke2VersionLine().FindStringSubmatch(strings.TrimSpace(first))
	if m == nil {
		p.unreadable("%s --version (the binary %s runs): its first line is not \"%s\": %s's version is taken from its data directory; check the binary", bin, unit.Name, p.opts.Distribution.Profile().VersionExample, p.opts.Distribution.Name())
		return "", "", false
	}
	if _, err := rke2.ParseVersion(m[1]); err != nil {
		p.unreadable("%s --version (the binary %s runs): the version it prints is not a Kubernetes version: %s's version is taken from its data directory", bin, unit.Name, p.opts.Distribution.Name())
		return "", "", false
	}
	return m[1], bin + " --version", true
}

// firstVersionLine runs onDisk --version, bounded in time and output,
// with the environment env (nil: an empty one, as boundexec runs), and
// returns the first line it printed: RKE2's binary and the host's tools
// are asked alike.
func firstVersionLine(onDisk string, env []string, timeout time.Duration) (string, error) {
	res, err := boundexec.Run(context.Background(), boundexec.Command{
		Argv: []string{onDisk, "--version"}, Env: env, Timeout: timeout, MaxOutput: maxVersionOutput,
	})
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(res.Stdout, "\n")
	return first, nil
}

// hostExecutable resolves hostPath in the root and checks that it is what
// systemd could run: a regular file with an execute bit (errNotExecutable
// when it has none).
func (p *probe) hostExecutable(hostPath string) (onDisk string, err error) {
	onDisk, err = p.root.Resolve(hostPath)
	if err != nil {
		return "", err
	}
	st, err := p.root.Stat(hostPath)
	switch {
	case err != nil:
		return "", err
	case !st.Mode().IsRegular():
		return "", errors.New("not a regular file")
	case st.Mode().Perm()&0o111 == 0:
		return "", errNotExecutable
	}
	return onDisk, nil
}

// runProblem words a failed run without the program's output.
func runProblem(err error) string {
	if errors.Is(err, boundexec.ErrTimeout) {
		return err.Error()
	}
	var exit interface{ ExitCode() int }
	if errors.As(err, &exit) && exit.ExitCode() >= 0 {
		return "exited with status " + strconv.Itoa(exit.ExitCode())
	}
	return errText(err)
}
