package hostfs

import (
	"strings"
	"testing"
)

// Only the superblock's options count: a read-only bind of a writable
// filesystem (the first mount of 0:52 here, a pod's view) is not
// read-only, a filesystem mounted read-only is.
func TestSuperblockReadOnly(t *testing.T) {
	table := `22 1 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
1120 1100 0:52 /rke2-proxy-backend /run/rke2-proxy-backend ro,nosuid,nodev,relatime - tmpfs tmpfs rw,size=1638400k,mode=755
26 1 0:25 / /run rw,nosuid,nodev shared:5 - tmpfs tmpfs rw,size=1638400k,mode=755
900 26 0:60 / /run/broken ro,relatime shared:6 - tmpfs tmpfs ro,size=8k
901 26 253:1 / /srv rw,relatime - ext4 /dev/vda1 rw,errors=remount-ro,data=ordered
`
	for _, tc := range []struct {
		major, minor uint32
		want         bool
	}{{0, 52, false}, {0, 25, false}, {0, 60, true}, {253, 1, false}, {9, 9, false}} {
		got, err := superblockReadOnly(strings.NewReader(table), tc.major, tc.minor)
		if err != nil || got != tc.want {
			t.Errorf("%d:%d: %v, %v; want %v", tc.major, tc.minor, got, err, tc.want)
		}
	}
}
