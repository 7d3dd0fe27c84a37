// Package kubeapi is the one Kubernetes API client of the tool: a
// kubeconfig reader for the subset a node's own credentials use, and GET
// and PATCH with timeouts, a response cap, bounded retries and a rate
// limit. It is not client-go (docs/DESIGN-notes.md says why): the tool
// writes two small patches to one object and reads nothing else.
package kubeapi

import (
	"encoding/base64"
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// maxFile bounds every file a kubeconfig names (and the kubeconfig): a
// certificate chain or a token is a few kilobytes.
const maxFile = 256 << 10

// Credentials are what a kubeconfig's current context says: where the
// API server is and how to prove who we are to it.
type Credentials struct {
	File   string // the kubeconfig, for messages
	Server string // https://host:port, maybe with a path (BaseURL)
	CA     []byte // PEM; nil trusts the system's roots
	Cert   []byte // PEM client certificate, with Key
	Key    []byte
	Token  string // a bearer token, instead of or beside the certificate
}

type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string         `yaml:"name"`
		Cluster map[string]any `yaml:"cluster"`
	} `yaml:"clusters"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	Users []struct {
		Name string         `yaml:"name"`
		User map[string]any `yaml:"user"`
	} `yaml:"users"`
}

// The keys read from a cluster and a user entry; any other key with a
// value is refused, since ignoring it (a proxy, an exec plugin, skipping
// TLS verification) would talk to the server in another way than the
// file says.
var (
	clusterKeys = []string{"server", "certificate-authority", "certificate-authority-data"}
	userKeys    = []string{"client-certificate", "client-certificate-data", "client-key", "client-key-data", "token", "tokenFile"}
)

// Load reads the kubeconfig file (a host path under root) and the files
// it names: relative paths are relative to the kubeconfig's directory, as
// kubectl reads them, and every file is read under root.
func Load(root hostfs.Root, file string) (Credentials, error) {
	data, err := root.ReadFileMax(file, maxFile)
	if err != nil {
		return Credentials{}, fmt.Errorf("kubeconfig %s: %w", root.Path(file), err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(data, &kc); err != nil {
		return Credentials{}, fmt.Errorf("kubeconfig %s: not a kubeconfig: %w", root.Path(file), err)
	}
	r := reader{root: root, file: file}
	cluster, user, err := r.pick(kc)
	if err != nil {
		return Credentials{}, err
	}
	c := Credentials{File: root.Path(file)}
	if err := r.only("cluster", cluster, clusterKeys); err != nil {
		return c, err
	}
	if err := r.only("user", user, userKeys); err != nil {
		return c, err
	}
	if c.Server, err = r.str("cluster.server", cluster["server"]); err != nil {
		return c, err
	}
	if _, err := BaseURL(c.Server); err != nil {
		return c, fmt.Errorf("kubeconfig %s: %w", c.File, err)
	}
	if c.CA, err = r.blob("cluster.certificate-authority", cluster); err != nil {
		return c, err
	}
	if c.Cert, err = r.blob("user.client-certificate", user); err != nil {
		return c, err
	}
	if c.Key, err = r.blob("user.client-key", user); err != nil {
		return c, err
	}
	if (c.Cert == nil) != (c.Key == nil) {
		return c, fmt.Errorf("kubeconfig %s: user has a client certificate or a client key but not both: give client-certificate and client-key", c.File)
	}
	if c.Token, err = r.token(user); err != nil {
		return c, err
	}
	if c.Cert == nil && c.Token == "" {
		return c, fmt.Errorf("kubeconfig %s: user has no client certificate and no token: the node's kubelet kubeconfig has both client-certificate and client-key", c.File)
	}
	return c, nil
}

type reader struct {
	root hostfs.Root
	file string
}

func (r reader) errf(format string, a ...any) error {
	return fmt.Errorf("kubeconfig %s: "+format, append([]any{r.root.Path(r.file)}, a...)...)
}

// pick follows current-context to its cluster and user entries.
func (r reader) pick(kc kubeconfig) (cluster, user map[string]any, err error) {
	if kc.CurrentContext == "" {
		return nil, nil, r.errf("no current-context: set one (RKE2's kubelet.kubeconfig has current-context: Default)")
	}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == kc.CurrentContext {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return nil, nil, r.errf("current-context %q: no context of that name in contexts", kc.CurrentContext)
	}
	for _, c := range kc.Clusters {
		if c.Name == clusterName {
			cluster = c.Cluster
		}
	}
	for _, u := range kc.Users {
		if u.Name == userName {
			user = u.User
		}
	}
	if cluster == nil {
		return nil, nil, r.errf("context %q: cluster %q is not in clusters", kc.CurrentContext, clusterName)
	}
	if user == nil {
		return nil, nil, r.errf("context %q: user %q is not in users", kc.CurrentContext, userName)
	}
	return cluster, user, nil
}

func (r reader) only(where string, m map[string]any, known []string) error {
	for k, v := range m {
		if v == nil || containsKey(known, k) {
			continue
		}
		return r.errf("%s: key %q is not supported (supported: %s): use a kubeconfig with a client certificate or a token, as the node's kubelet.kubeconfig", where, k, strings.Join(known, ", "))
	}
	return nil
}

func containsKey(keys []string, k string) bool {
	for _, known := range keys {
		if known == k {
			return true
		}
	}
	return false
}

func (r reader) str(key string, v any) (string, error) {
	if v == nil {
		return "", r.errf("%s is missing", key)
	}
	s, ok := v.(string)
	if !ok || s == "" {
		return "", r.errf("%s: %v is not a non-empty string", key, v)
	}
	return s, nil
}

// blob reads key's file (key) or its inline base64 (key-data); nil when
// neither is set. Both set is refused: kubectl's precedence between them
// is not something an operator should have to know.
func (r reader) blob(key string, m map[string]any) ([]byte, error) {
	name := key[strings.IndexByte(key, '.')+1:]
	file, data := m[name], m[name+"-data"]
	switch {
	case file != nil && data != nil:
		return nil, r.errf("%s and %s-data are both set: keep one", key, key)
	case data != nil:
		s, err := r.str(key+"-data", data)
		if err != nil {
			return nil, err
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, r.errf("%s-data: not base64: %v", key, err)
		}
		return b, nil
	case file != nil:
		p, err := r.str(key, file)
		if err != nil {
			return nil, err
		}
		return r.read(key, p)
	}
	return nil, nil
}

func (r reader) read(key, p string) ([]byte, error) {
	if !path.IsAbs(p) {
		p = path.Join(path.Dir(r.file), p)
	}
	b, err := r.root.ReadFileMax(p, maxFile)
	if err != nil {
		return nil, r.errf("%s %s: %w", key, p, err)
	}
	return b, nil
}

func (r reader) token(user map[string]any) (string, error) {
	if user["token"] != nil && user["tokenFile"] != nil {
		return "", r.errf("user.token and user.tokenFile are both set: keep one")
	}
	if user["token"] != nil {
		return r.str("user.token", user["token"])
	}
	if user["tokenFile"] == nil {
		return "", nil
	}
	p, err := r.str("user.tokenFile", user["tokenFile"])
	if err != nil {
		return "", err
	}
	b, err := r.read("user.tokenFile", p)
	return strings.TrimSpace(string(b)), err
}
