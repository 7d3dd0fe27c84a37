// Package dropin renders the RKE2 and k3s config drop-in apply writes. It
// is apart from internal/rke2, which the generator links to read RKE2's
// config, because text/template links net/url and net/netip, whose inits
// and pages every boot would pay for a file only apply writes
// (bench/generator.sh; the package rules in docs/DESIGN-notes.md).
package dropin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"text/template"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/templates"
)

var (
	tmplOnce sync.Once
	tmpl     *template.Template
)

// Render renders d as YAML. Every value is validated (rke2.DropIn.Check)
// and written as a double-quoted scalar, so no value can end its list item,
// start a new key or be read as anything but a string.
func Render(d rke2.DropIn) ([]byte, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	tmplOnce.Do(func() {
		tmpl = template.Must(template.New("rke2-dropin").
			Funcs(template.FuncMap{"yaml": yamlString}).Parse(templates.RKE2DropIn))
	})
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("render RKE2 drop-in: %w", err)
	}
	return buf.Bytes(), nil
}

// yamlString writes s as a double-quoted YAML scalar. JSON string syntax is
// a subset of YAML's double-quoted style, and Go's encoder escapes every
// quote, backslash and control character.
func yamlString(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic("dropin: a string failed to encode as JSON: " + err.Error()) // cannot happen
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// RenderK3s renders d for k3s, which reads config.yaml.d with the same "+"
// keys (k3s's pkg/configfilearg, which RKE2 uses too) but has no
// kube-proxy-extra-env: kube-proxy runs inside k3s, and its environment is
// the k3s unit's (the generator's drop-in sets IPTABLES_MODE there). With
// preferBundledBin the drop-in also sets prefer-bundled-bin: true, so the
// iptables that honours IPTABLES_MODE is the one kube-proxy, flannel and
// kube-router run.
func RenderK3s(d rke2.DropIn, preferBundledBin bool) ([]byte, error) {
	d.KubeProxyEnv = nil
	data, err := Render(d)
	if err != nil {
		return nil, err
	}
	data = inK3sComments(data)
	if !preferBundledBin {
		return data, nil
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	return append(data, rke2.KeyPreferBundledBin+": true\n"...), nil
}

// k3sComment words the drop-in's comments for k3s: it is k3s that
// restarts (and runs apply first) and k3s's config that may pin things.
var k3sComment = strings.NewReplacer(
	"before every RKE2 start", "before every k3s start",
	"RKE2's own config", "k3s's own config",
)

// inK3sComments rewrites only comment lines: a value (a node label, an
// extra arg) is the operator's and stays as written.
func inK3sComments(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte("#")) {
			lines[i] = []byte(k3sComment.Replace(string(l)))
		}
	}
	return bytes.Join(lines, nil)
}
