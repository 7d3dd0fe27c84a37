package hostfs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
)

// ReadDir lists a host directory through Resolve, sorted by name, bounded
// by MaxDirEntries (see ReadDirMax).
func (r Root) ReadDir(hostPath string) ([]fs.DirEntry, error) {
	return r.ReadDirMax(hostPath, MaxDirEntries)
}

// direntBufs are getdents buffers, on the heap: 8 KiB on the stack would
// make the generator's first listing grow its goroutine's stack, a copy
// that walks every frame's tables.
var direntBufs = sync.Pool{New: func() any { return new([8 << 10]byte) }}

// ReadDirMax lists a host directory, sorted by name. The open cannot block
// (O_DIRECTORY refuses a FIFO in the directory's place). More than max
// entries returns the first max read (in directory order, then sorted)
// together with an error that says so, so a caller can go on with a
// partial list and report it. Like ReadFileMax it uses the system calls
// directly: the generator lists a few dozen sysfs directories per boot.
func (r Root) ReadDirMax(hostPath string, max int) ([]fs.DirEntry, error) {
	fd, p, dir, err := r.openDir(hostPath)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var entries []fs.DirEntry
	buf := direntBufs.Get().(*[8 << 10]byte)
	defer direntBufs.Put(buf)
	for {
		var n int
		if err := ignoringEINTR(func() (err error) { n, err = syscall.ReadDirent(fd, buf[:]); return err }); err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: p, Err: err}
		}
		if n <= 0 {
			break
		}
		entries = appendDirents(entries, dir, buf[:n])
		if len(entries) > max {
			entries = entries[:max]
			sortEntries(entries)
			return entries, &fs.PathError{Op: "readdir", Path: p, Err: &tooLargeError{fmt.Sprintf("more than %d entries, the most read from one directory", max)}}
		}
	}
	sortEntries(entries)
	return entries, nil
}

// appendDirents decodes linux_dirent64 records (ino u64, off s64, reclen
// u16, type u8, NUL-terminated name), skipping "." and "..".
func appendDirents(entries []fs.DirEntry, dir func() string, buf []byte) []fs.DirEntry {
	for len(buf) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(buf[16:18]))
		if reclen < 19 || reclen > len(buf) {
			break
		}
		typ, name := buf[18], buf[19:reclen]
		buf = buf[reclen:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if s := string(name); s != "." && s != ".." && s != "" {
			entries = append(entries, &dirent{dir: dir, name: s, typ: direntType(typ)})
		}
	}
	return entries
}

// direntType maps d_type; unknown (some filesystems) comes out as
// fs.ModeIrregular and is found by lstat. d_type is the stat mode's type
// bits shifted down by 12 (DT_REG == S_IFREG>>12 and so on; the kernel's
// S_DT in include/linux/fs_types.h), so modeOf reads both.
func direntType(t uint8) fs.FileMode {
	return modeOf(uint32(t) << 12)
}

// dirent is one directory entry; like os.DirEntry it does not follow a
// symlink for its type. dir is the listed directory on disk, for the lstat
// of a type the filesystem did not give, and for Info.
type dirent struct {
	dir  func() string
	name string
	typ  fs.FileMode
}

func (d *dirent) Name() string { return d.name }
func (d *dirent) IsDir() bool  { return d.Type().IsDir() }
func (d *dirent) Type() fs.FileMode {
	if d.typ == fs.ModeIrregular {
		if fi, err := os.Lstat(filepath.Join(d.dir(), d.name)); err == nil {
			d.typ = fi.Mode().Type()
		}
	}
	return d.typ
}
func (d *dirent) Info() (fs.FileInfo, error) { return os.Lstat(filepath.Join(d.dir(), d.name)) }
func (d *dirent) String() string             { return fs.FormatDirEntry(d) }

func sortEntries(e []fs.DirEntry) {
	sort.Slice(e, func(i, j int) bool { return e[i].Name() < e[j].Name() })
}

// notRegularDirError: a directory was expected.
type notRegularDirError struct{ mode fs.FileMode }

func (e *notRegularDirError) Error() string {
	return "not a directory but " + modeName(e.mode)
}

// openDir opens hostPath as a directory to list. The open cannot block
// (O_DIRECTORY refuses a FIFO in the directory's place); what is there
// instead is named in the error. p is the on-disk path for messages, dir
// the directory the entries are in (resolved by the walk when the kernel
// resolved it in the root, and only if asked).
func (r Root) openDir(hostPath string) (fd int, p string, dir func() string, err error) {
	flags := syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if !r.IsHost() {
		fd, used, err := r.openIn(hostPath, flags)
		if used {
			p = r.Path(hostPath)
			if err != nil {
				return -1, "", nil, openDirError(p, err, func() (fs.FileInfo, error) { return r.Stat(hostPath) })
			}
			return fd, p, sync.OnceValue(func() string { d, _ := r.Resolve(hostPath); return d }), nil
		}
	}
	if p, err = r.Resolve(hostPath); err != nil {
		return -1, "", nil, err
	}
	if err := ignoringEINTR(func() (err error) { fd, err = syscall.Open(p, flags, 0); return err }); err != nil {
		return -1, "", nil, openDirError(p, err, func() (fs.FileInfo, error) { return os.Stat(p) })
	}
	return fd, p, func() string { return p }, nil
}

func openDirError(p string, err error, stat func() (fs.FileInfo, error)) error {
	if err == syscall.ENOTDIR {
		if fi, serr := stat(); serr == nil {
			return &fs.PathError{Op: "open", Path: p, Err: &notRegularDirError{fi.Mode()}}
		}
	}
	return &fs.PathError{Op: "open", Path: p, Err: err}
}
