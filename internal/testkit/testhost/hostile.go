package testhost

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Hostile inputs: what a careless or malicious root can leave where the
// tool reads, so tests can show each is refused promptly and clearly.

// FIFO replaces hostPath with a named pipe; a plain open of it for reading
// blocks until a writer comes, which none ever does.
func (h *Host) FIFO(hostPath string) *Host {
	h.t.Helper()
	full := h.path(hostPath)
	h.mkdir(filepath.Dir(full))
	_ = os.RemoveAll(full)
	if err := syscall.Mkfifo(full, 0o644); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return h
}

// DevZero makes hostPath the character device /dev/zero (1:5): endless
// zeros. A fixture root keeps every link inside it, so a link to the real
// /dev/zero cannot be planted; the device node itself can, as root only
// (the test is skipped otherwise, and fails under CI: see Unmet).
func (h *Host) DevZero(hostPath string) *Host {
	h.t.Helper()
	return h.charDevice(hostPath, 5)
}

// DevNull makes hostPath the character device /dev/null (1:3), as DevZero
// does: what a unit or drop-in masked with a link to /dev/null reads.
func (h *Host) DevNull(hostPath string) *Host {
	h.t.Helper()
	return h.charDevice(hostPath, 3)
}

// charDevice makes hostPath the memory device 1:minor (root only).
func (h *Host) charDevice(hostPath string, minor int) *Host {
	h.t.Helper()
	if os.Geteuid() != 0 {
		Unmet(h.t, "testhost: creating a device node needs root")
	}
	full := h.path(hostPath)
	h.mkdir(filepath.Dir(full))
	_ = os.RemoveAll(full)
	if err := syscall.Mknod(full, syscall.S_IFCHR|0o644, 1<<8|minor); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return h
}

// GzipFile writes content gzipped at hostPath (e.g. an oversized
// /proc/config.gz); repeat copies it that many times, streamed, so a
// config of many MiB costs little memory to build.
func (h *Host) GzipFile(hostPath string, content []byte, repeat int) *Host {
	h.t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	for range repeat {
		if _, err := zw.Write(content); err != nil {
			h.t.Fatalf("testhost: %v", err)
		}
	}
	if err := zw.Close(); err != nil {
		h.t.Fatalf("testhost: %v", err)
	}
	return h.write(hostPath, buf.Bytes())
}

// ManyPCI adds n PCI devices (vendor 8086, device 10fb, no driver) at
// addresses 0000:XX:YY.Z in sysfs's sort order, and returns the address of
// the i-th (0-based) so a test can put a trigger on a late one.
func (h *Host) ManyPCI(n int) *Host {
	h.t.Helper()
	// Straight system calls: the builders' checks per file cost seconds at
	// this count.
	devices := h.path("/sys/devices/pci0000:00")
	links := h.path("/sys/bus/pci/devices")
	h.mkdir(devices)
	h.mkdir(links)
	for i := range n {
		addr := PCIAddress(i)
		dir := filepath.Join(devices, addr)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "vendor"), []byte("0x8086\n"), 0o644)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "device"), []byte("0x10fb\n"), 0o644)
		}
		if err == nil {
			err = os.Symlink("../../../devices/pci0000:00/"+addr, filepath.Join(links, addr))
		}
		if err != nil {
			h.t.Fatalf("testhost: %v", err)
		}
	}
	return h
}

// PCIAddress is the i-th address ManyPCI uses.
func PCIAddress(i int) string {
	return fmt.Sprintf("0000:%02x:%02x.%d", i/256, (i/8)%32, i%8)
}
