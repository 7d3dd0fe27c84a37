package fleetview

import (
	"path/filepath"
	"time"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
)

// Connect reads the kubeconfig file as the user sees the filesystem
// (kubeapi refuses what it does not speak, an exec plugin or a proxy,
// naming the key) and lists with kubeapi's client, given the time and the
// body size a whole cluster's Node list needs.
func Connect(file string) (List, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	creds, err := kubeapi.Load(hostfs.New("/"), abs)
	if err != nil {
		return nil, err
	}
	c, err := kubeapi.New(creds, kubeapi.Options{Timeout: 30 * time.Second, MaxBody: MaxList})
	if err != nil {
		return nil, err
	}
	return c.Get, nil
}
