package apply

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/decide"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/record/plan"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// dropInAt is what sits at the drop-in path: what apply may replace or
// remove, and what RKE2 reads when apply could do neither.
type dropInAt struct {
	path   string // under the root
	absent bool
	// ours is a regular file that opens with our header; backend is the
	// one its header names ("" when it names none this version knows).
	ours    bool
	backend backend.Backend
	// kind words a file that is not ours ("a symbolic link", ...).
	kind string
	// err is set when apply cannot tell (the file cannot be read).
	err error
}

// headRead bounds the read of a drop-in's head: the header and the
// backend line, never the whole of a file that may not be ours.
const headRead = 256

// inspect resolves hostPath's directory under the root and looks at the
// last component itself, so a link there is seen as a link.
func inspect(o Options, hostPath string) dropInAt {
	at := dropInAt{path: o.Root.Path(hostPath)}
	dir, err := o.Root.Resolve(path.Dir(hostPath))
	if err == nil {
		at.path = filepath.Join(dir, path.Base(hostPath))
		var fi fs.FileInfo
		if fi, err = os.Lstat(at.path); err == nil && !fi.Mode().IsRegular() {
			at.kind = kind(fi)
			return at
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		at.absent = true // writing will say what is wrong with the directory
		return at
	case err != nil:
		at.err = err
		return at
	}
	head, err := readHead(at.path)
	if err != nil {
		at.err = err
		return at
	}
	if !rke2.IsOurs(head) {
		at.kind = "a regular file"
		return at
	}
	at.ours, at.backend = true, headerBackend(head)
	return at
}

func kind(fi fs.FileInfo) string {
	switch m := fi.Mode(); {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	default:
		return "a special file"
	}
}

// readHead reads at most headRead bytes, without following a link or
// waiting on a FIFO.
func readHead(p string) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, headRead)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:n], nil
}

// backendLine is the drop-in's second line (templates/rke2-dropin.yaml.tmpl),
// before the backend's name.
const backendLine = "# kube-proxy backend: "

// headerBackend is the backend our drop-in's header names ("" when its
// second line names none this version knows).
func headerBackend(head []byte) backend.Backend {
	lines := bytes.SplitN(head, []byte("\n"), 3)
	if len(lines) < 3 || !bytes.HasPrefix(lines[1], []byte(backendLine)) {
		return ""
	}
	b, err := backend.Parse(string(bytes.TrimPrefix(lines[1], []byte(backendLine))))
	if err != nil {
		return ""
	}
	return b
}

// reads is what RKE2 is given once a run gave up (why): whatever is at
// the drop-in path now, looked at rather than assumed, as the plan's
// Applied and in on_failure's words.
func reads(o Options, hostPath string, d decide.Decision, why string) (plan.Applied, string) {
	name := o.Distribution.Name()
	at := inspect(o, hostPath)
	nothing := func(r string) (plan.Applied, string) {
		return plan.Applied{Nothing: fmt.Sprintf("%s; %s starts with %s", why, name, r)}, r
	}
	switch {
	case at.err != nil:
		return nothing(fmt.Sprintf("whatever is at %s (apply cannot read it: %v)", hostPath, at.err))
	case at.absent:
		return nothing(ReadsDefaults)
	case !at.ours:
		return nothing(ReadsOperators)
	case at.backend == "":
		return nothing(fmt.Sprintf("the drop-in an earlier run left at %s, which apply could not remove (its header names no backend this version knows)", hostPath))
	}
	mode := at.backend.ProxyMode()
	if d.ProxyMode == decide.ProxyModeIPVS {
		mode = decide.ProxyModeIPVS // RKE2's config keeps ipvs; ours never sets a mode then
	}
	return plan.Applied{Backend: at.backend, ProxyMode: mode, DropIn: hostPath, By: plan.ByEarlierRun},
		fmt.Sprintf("the drop-in an earlier run left at %s, which names %s (apply could neither replace nor remove it)", hostPath, at.backend)
}
