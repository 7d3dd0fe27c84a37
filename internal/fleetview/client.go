package fleetview

import (
	"path/filepath"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
)

// PageTimeout bounds one page of the Node list, connect to last byte, as
// kubeapi bounds any request: PageSize Nodes of about 10 kB (a Node with
// its images and conditions) take it over a link of about 80 kB/s. The
// listing as a whole has no limit (kubectl's has none either): it ends
// when its last page does.
const PageTimeout = time.Minute

// Connect reads the kubeconfig file as the user sees the filesystem
// (kubeapi refuses what it does not speak, an exec plugin or a proxy,
// naming the key) and lists with kubeapi's client, one page per request.
func Connect(file string) (List, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	creds, err := kubeapi.Load(hostfs.New("/"), abs)
	if err != nil {
		return nil, err
	}
	c, err := kubeapi.New(creds, kubeapi.Options{Timeout: PageTimeout, MaxBody: MaxPage})
	if err != nil {
		return nil, err
	}
	return c.Get, nil
}
