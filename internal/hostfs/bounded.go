package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Size caps per kind of host file. The generator and apply run before RKE2
// at every boot: a wrong file (a link to /dev/zero, a multi-gigabyte log
// dropped into config.yaml.d) must become a clear problem, not a boot that
// never ends or a process that eats the node's memory. Each cap is far
// above any real file of its kind.
const (
	// MaxTextFile bounds config files, units, environment files, our plan
	// and the small /proc and /sys files: real ones are a few KiB.
	MaxTextFile = 1 << 20
	// MaxModuleIndex bounds modules.dep, modules.alias and modules.builtin:
	// 1-2 MiB on distribution kernels with every driver.
	MaxModuleIndex = 32 << 20
	// MaxDeviceTreeProp bounds a device-tree property read as text (model,
	// compatible): real ones are tens of bytes.
	MaxDeviceTreeProp = 4 << 10
	// MaxKernelConfig bounds a kernel config, both a file and what
	// /proc/config.gz decompresses to: real ones are about 300 KB.
	MaxKernelConfig = 16 << 20
	// MaxDirEntries bounds one directory listing.
	MaxDirEntries = 1 << 17
)

// ErrNotRegular and ErrTooLarge classify a refused read (errors.Is).
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
)

// notRegularError says what the file is instead; it never carries content.
type notRegularError struct{ mode fs.FileMode }

func (e *notRegularError) Error() string {
	if e.mode.IsDir() {
		return syscall.EISDIR.Error() // the words os.ReadFile has always used
	}
	return "not a regular file but " + modeName(e.mode)
}

func (e *notRegularError) Is(target error) bool {
	return target == ErrNotRegular || e.mode.IsDir() && target == syscall.EISDIR
}

// tooLargeError names the cap that was reached.
type tooLargeError struct{ text string }

func (e *tooLargeError) Error() string        { return e.text }
func (e *tooLargeError) Is(target error) bool { return target == ErrTooLarge }

// TooLarge is the error for a file (or what a decompressor makes of it)
// longer than max bytes; what is "larger" or e.g. "decompresses to more".
func TooLarge(what string, max int64) error {
	return &tooLargeError{fmt.Sprintf("%s than %s, the most read from this kind of file: it cannot be the right file; check it", what, sizeText(max))}
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// ReadFile reads a host file through Resolve, bounded by MaxTextFile (see
// ReadFileMax).
func (r Root) ReadFile(hostPath string) ([]byte, error) {
	return r.ReadFileMax(hostPath, MaxTextFile)
}

// ReadFileMax reads a host file through Resolve. Only regular files are
// read: a FIFO, a device or a socket is refused before it is opened (opening
// some devices has side effects, reading a FIFO blocks) and checked again on
// the open file. At most max+1 bytes are read, and more than max is an
// error, never a silent cut. Errors are *fs.PathError with the on-disk
// path; none of them holds any of the file's content.
//
// It uses the system calls directly, not os.File: the generator reads about
// a hundred files per boot, and os.File's poller registration, finalizer
// and extra fstat were a measurable part of its run time.
func (r Root) ReadFileMax(hostPath string, max int64) ([]byte, error) {
	fd, p, err := r.openRegular(hostPath)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, &fs.PathError{Op: "read", Path: p, Err: &notRegularError{modeOf(st.Mode)}}
	}
	// procfs reports size 0 and sysfs 4096 for every attribute: their
	// sizes say nothing, so only real files are refused by size up front.
	if !pseudoFS(hostPath) && st.Size > max {
		return nil, &fs.PathError{Op: "read", Path: p, Err: TooLarge("larger", max)}
	}
	size := st.Size
	if size <= 0 || size > max {
		size = 4096
	}
	data := make([]byte, 0, size+1)
	for {
		if int64(len(data)) > max {
			return nil, &fs.PathError{Op: "read", Path: p, Err: TooLarge("larger", max)}
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
		room := min(int64(cap(data)), max+1)
		var n int
		err := ignoringEINTR(func() (err error) { n, err = syscall.Read(fd, data[len(data):room]); return err })
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: p, Err: err}
		}
		if n == 0 {
			return data, nil
		}
		data = data[:len(data)+n]
	}
}

func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}

// modeOf turns a stat mode's type bits into an fs.FileMode; bits that name
// no type (DT_UNKNOWN, see direntType) are fs.ModeIrregular.
func modeOf(m uint32) fs.FileMode {
	switch m & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}

// pseudoFS reports whether hostPath is on procfs or sysfs, whose files are
// regular but whose sizes are made up.
func pseudoFS(hostPath string) bool {
	p := "/" + strings.TrimLeft(hostPath, "/")
	return strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/")
}

// openRegular opens hostPath for reading once a look (not an open) has
// found a regular file there; p is the on-disk path for messages.
func (r Root) openRegular(hostPath string) (fd int, p string, err error) {
	if !r.IsHost() {
		p = r.Path(hostPath)
		err = r.inRoot(func(at func(string, int) (int, error)) error {
			look, err := at(hostPath, unix.O_PATH)
			if err != nil {
				return &fs.PathError{Op: "stat", Path: p, Err: err}
			}
			var st syscall.Stat_t
			err = syscall.Fstat(look, &st)
			syscall.Close(look)
			if err != nil {
				return &fs.PathError{Op: "stat", Path: p, Err: err}
			}
			if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
				return &fs.PathError{Op: "read", Path: p, Err: &notRegularError{modeOf(st.Mode)}}
			}
			if fd, err = at(hostPath, syscall.O_RDONLY|syscall.O_NONBLOCK); err != nil {
				return &fs.PathError{Op: "open", Path: p, Err: err}
			}
			return nil
		})
		if !errors.Is(err, errWalk) {
			return fd, p, err
		}
	}
	if p, err = r.Resolve(hostPath); err != nil {
		return -1, "", err
	}
	// procfs and sysfs hold no FIFOs or device nodes, so on the host their
	// files need no look before the open (the fstat after it still checks).
	if !(r.IsHost() && pseudoFS(hostPath)) {
		var st syscall.Stat_t
		if err := ignoringEINTR(func() error { return syscall.Stat(p, &st) }); err != nil {
			return -1, "", &fs.PathError{Op: "stat", Path: p, Err: err}
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			return -1, "", &fs.PathError{Op: "read", Path: p, Err: &notRegularError{modeOf(st.Mode)}}
		}
	}
	flags := syscall.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if !r.IsHost() {
		// Resolve followed every link inside the root already; a link in
		// the last place now was swapped in since, and would lead out.
		flags |= syscall.O_NOFOLLOW
	}
	if err := ignoringEINTR(func() (err error) { fd, err = syscall.Open(p, flags, 0); return err }); err != nil {
		return -1, "", &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return fd, p, nil
}
