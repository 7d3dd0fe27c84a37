package switchover

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// generatorDir is the normal directory systemd runs generators into, where
// ours writes RKE2's drop-ins at boot and at every daemon-reload.
const generatorDir = "/run/systemd/generator"

// maxDropIn bounds the read of one generated drop-in (ours are a few
// hundred bytes).
const maxDropIn = 64 << 10

// reloadNeeded says whether a daemon-reload would change what RKE2 starts
// with: whether the drop-ins our generator would write now differ from
// those in the generator directory. It renders them with the generator's
// own code, as systemd runs it (the default config file, the distribution
// found on the root, this process's environment and executable), into a
// temporary directory, and compares every file of ours. "" means nothing
// would change; else the reason to reload, which is the answer whenever it
// cannot tell. A backend b the drop-in for unit does not give apply
// settles it without rendering: every drop-in rendered for b does, so a
// switch onto another backend reloads at no extra cost.
func reloadNeeded(root hostfs.Root, unit string, b backend.Backend) string {
	live, err := ownDropIns(root.Path(generatorDir))
	if err != nil {
		return fmt.Sprintf("the generated drop-ins cannot be read (%v)", err)
	}
	own := filepath.Join(unit+".d", hostfs.UnitDropInName)
	if !givesBackend(live[own], b) {
		return fmt.Sprintf("%s gives apply another backend than %s", filepath.Join(generatorDir, own), b)
	}
	tmp, err := os.MkdirTemp("", "rke2-proxy-backend-render-")
	if err != nil {
		return fmt.Sprintf("no directory to render the drop-ins into (%v)", err)
	}
	defer os.RemoveAll(tmp)
	out, err := generator.Run(generator.Options{
		Root:    root,
		Dirs:    []string{tmp},
		Environ: os.Environ(),
		Binary:  generator.InstalledBinary(root, os.Executable),
		Log:     generator.NewLogger(io.Discard),
	})
	if out != generator.Wrote {
		return fmt.Sprintf("the generator would not write drop-ins now (%s: %v)", out, err)
	}
	now, err := ownDropIns(tmp)
	if err != nil {
		return fmt.Sprintf("the rendered drop-ins cannot be read (%v)", err)
	}
	if len(now) != len(live) {
		return fmt.Sprintf("the generator would now write %d drop-ins, not %d", len(now), len(live))
	}
	for p, data := range now {
		if !bytes.Equal(live[p], data) {
			return fmt.Sprintf("the generator would now write %s otherwise", filepath.Join(generatorDir, p))
		}
	}
	return ""
}

// givesBackend reports whether a drop-in runs apply with --backend=b.
func givesBackend(dropIn []byte, b backend.Backend) bool {
	for _, line := range strings.Split(string(dropIn), "\n") {
		if strings.HasPrefix(line, "ExecStartPre=") && strings.Contains(line+" ", " apply --backend="+string(b)+" ") {
			return true
		}
	}
	return false
}

// ownDropIns reads every drop-in of ours in a generator directory: the
// files named hostfs.UnitDropInName in its <unit>.d directories, keyed by
// their path under dir. Other generators' files are not ours to compare.
func ownDropIns(dir string) (map[string][]byte, error) {
	subs, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	host := hostfs.New("/")
	for _, s := range subs {
		if !s.IsDir() || !strings.HasSuffix(s.Name(), ".d") {
			continue
		}
		p := filepath.Join(s.Name(), hostfs.UnitDropInName)
		data, err := host.ReadFileMax(filepath.Join(dir, p), maxDropIn)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[p] = data
	}
	return out, nil
}
