package clusterpublish

import (
	"context"
	"net/url"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/distro"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/kubeapi"
)

// Client reads and patches the node's own Node object with its kubelet's
// credentials.
type Client struct {
	Target
	api *kubeapi.Client
}

// Open finds the node under root in kind's config and data-dir (Locate)
// and opens a client to its API server with o.
func Open(root hostfs.Root, kind distro.Kind, o kubeapi.Options) (*Client, error) {
	t, err := Locate(root, kind)
	if err != nil {
		return nil, err
	}
	api, err := kubeapi.New(t.Creds, o)
	if err != nil {
		return nil, err
	}
	return &Client{Target: t, api: api}, nil
}

func (c *Client) path() string { return "/api/v1/nodes/" + url.PathEscape(c.Node) }

// Get is the Node object, as the API server returns it.
func (c *Client) Get(ctx context.Context) ([]byte, error) { return c.api.Get(ctx, c.path()) }

// PatchStatus applies body to nodes/NAME/status as a strategic-merge
// patch: conditions merge by type, so the kubelet's stay.
func (c *Client) PatchStatus(ctx context.Context, body []byte) error {
	_, err := c.api.Patch(ctx, c.path()+"/status", kubeapi.StrategicMerge, body)
	return err
}

// PatchMetadata applies body to nodes/NAME as a merge patch (the
// annotations).
func (c *Client) PatchMetadata(ctx context.Context, body []byte) error {
	_, err := c.api.Patch(ctx, c.path(), kubeapi.MergePatch, body)
	return err
}
