package hostfs_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/testhost"
)

// A config that links to a device is refused, not read: /dev/zero would
// never end. (An external test: mknod needs root, and testhost, which
// imports hostfs, makes the device or fails under CI=true.)
func TestReadFileRefusesADevice(t *testing.T) {
	h := testhost.New(t).DevZero("/dev-zero").Symlink("/etc/zero.yaml", "/dev-zero")
	done := make(chan error, 1)
	go func() {
		_, err := hostfs.New(h.Dir()).ReadFile("/etc/zero.yaml")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, hostfs.ErrNotRegular) || !strings.Contains(err.Error(), "character device") {
			t.Errorf("ReadFile(link to /dev/zero) = %v; want a not-a-regular-file error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile(link to /dev/zero) still reading after 5s")
	}
}
