package hostfs

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// ReadOnlyFS reports whether the filesystem holding hostPath is read-only
// itself (its superblock: remounted read-only, or mounted so), which every
// process on the host sees alike. A read-only view of a writable one (a
// read-only bind mount, such as a pod's hostPath mount of the directory)
// is not: another process may write there. So a reader that sees the
// directory read-only asks the superblock, in /proc/self/mountinfo.
func (r Root) ReadOnlyFS(hostPath string) (bool, error) {
	p, err := r.Resolve(hostPath)
	if err != nil {
		return false, err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(p, &fs); err != nil {
		return false, fmt.Errorf("statfs %s: %w", p, err)
	}
	if fs.Flags&unix.ST_RDONLY == 0 {
		return false, nil
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return false, fmt.Errorf("stat %s: %w", p, err)
	}
	f, err := os.Open(MountInfo)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return superblockReadOnly(io.LimitReader(f, maxMountInfo), unix.Major(st.Dev), unix.Minor(st.Dev))
}

// MountInfo is the calling process's own mount table: a reader's mounts,
// never a fixture root's.
const MountInfo = "/proc/self/mountinfo"

// maxMountInfo bounds the read: a node with thousands of pod mounts has a
// mount table of a few MiB at most.
const maxMountInfo = 16 << 20

// superblockReadOnly reads a mountinfo table (proc(5): "36 35 98:0 /mnt1
// /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue") and says
// whether the filesystem of device major:minor has "ro" among its
// superblock options. A device it does not list is not known read-only.
func superblockReadOnly(r io.Reader, major, minor uint32) (bool, error) {
	dev := []byte(fmt.Sprintf("%d:%d", major, minor))
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		line := s.Bytes()
		mount, super, ok := bytes.Cut(line, []byte(" - "))
		fields := bytes.Fields(mount)
		if !ok || len(fields) < 3 || !bytes.Equal(fields[2], dev) {
			continue
		}
		sf := strings.Fields(string(super))
		if len(sf) < 3 {
			continue
		}
		for _, opt := range strings.Split(sf[2], ",") {
			if opt == "ro" {
				return true, nil
			}
		}
	}
	return false, s.Err()
}
