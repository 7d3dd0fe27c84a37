package facts

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// ParseDeviceTreeStrings reads a device-tree string property (model, or
// compatible's NUL-separated list such as "synology,ds418\0realtek,rtd1296\0")
// into its strings. Empty entries are skipped; a byte that is neither
// printable ASCII nor NUL means the file is not such a property (the
// kernel exports binary properties the same way), and then nothing is
// taken from it.
func ParseDeviceTreeStrings(data []byte) ([]string, error) {
	var out []string
	for i, part := range bytes.Split(data, []byte{0}) {
		for j, c := range part {
			if c < 0x20 || c > 0x7e {
				return nil, fmt.Errorf("byte %d of entry %d is not printable text: not a device-tree string property", j, i+1)
			}
		}
		if len(part) > 0 {
			out = append(out, string(part))
		}
	}
	return out, nil
}

// deviceTree reads the machine's device-tree model and compatible list
// (empty when the machine has no device tree, as PCs do not).
func (p *probe) deviceTree() (model string, compatible []string) {
	read := func(hostPath string) []string {
		data, err := p.root.ReadFileMax(hostPath, hostfs.MaxDeviceTreeProp)
		switch {
		case isNotExist(err):
			return nil
		case errors.Is(err, hostfs.ErrTooLarge):
			p.unreadable("%s: larger than %d bytes, which no device-tree name is: device-tree legacy triggers cannot match it; check --root", hostPath, hostfs.MaxDeviceTreeProp)
			return nil
		case err != nil:
			p.unreadable("%s: %s: device-tree legacy triggers cannot match it; %s", hostPath, errText(err), fixHint(hostPath, err))
			return nil
		}
		list, err := ParseDeviceTreeStrings(data)
		if err != nil {
			p.unreadable("%s: %s: device-tree legacy triggers cannot match it; check --root", hostPath, err)
			return nil
		}
		return list
	}
	if m := read(hostfs.DeviceTreeModel); len(m) > 0 {
		model = m[0]
	}
	return model, read(hostfs.DeviceTreeCompatible)
}
