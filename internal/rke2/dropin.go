package rke2

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"sync"
	"text/template"
	"unicode"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/templates"
)

// DropInName is our RKE2 config drop-in. It sorts after Rancher's
// 50-rancher.yaml so our "+" keys append to what Rancher provisioned.
const DropInName = "60-proxy-backend.yaml"

// DropInMode keeps the drop-in private like RKE2's own config (it sits next
// to files holding tokens, and RKE2 warns about world-readable config).
const DropInMode = 0o600

// DropInPath is the drop-in's host path for RKE2's main config file: RKE2
// reads drop-ins from "<main config>.d" wherever the main file is.
func DropInPath(mainFile string) string {
	return path.Join(path.Clean("/"+mainFile)+".d", DropInName)
}

// DropIn is what our drop-in tells RKE2.
type DropIn struct {
	Backend       backend.Backend
	KubeProxyArgs []string // flag=value
	KubeProxyEnv  []string // KEY=VALUE
	NodeLabels    []string // key=value
}

var (
	dropInOnce sync.Once
	dropInTmpl *template.Template
)

// RenderDropIn renders d as YAML. Every value is validated and written as a
// double-quoted scalar, so no value can end its list item, start a new key
// or be read as anything but a string.
func RenderDropIn(d DropIn) ([]byte, error) {
	if _, err := backend.Parse(string(d.Backend)); err != nil {
		return nil, err
	}
	checks := []struct {
		key    string
		values []string
		check  func(string) error
	}{
		{KeyKubeProxyArg, d.KubeProxyArgs, checkFlag},
		{KeyKubeProxyExtraEnv, d.KubeProxyEnv, checkEnv},
		{KeyNodeLabel, d.NodeLabels, checkAssignment},
	}
	for _, c := range checks {
		for _, v := range c.values {
			if err := c.check(v); err != nil {
				return nil, fmt.Errorf("%s value %q: %w", c.key, v, err)
			}
		}
	}
	dropInOnce.Do(func() {
		dropInTmpl = template.Must(template.New("rke2-dropin").
			Funcs(template.FuncMap{"yaml": yamlString}).Parse(templates.RKE2DropIn))
	})
	var buf bytes.Buffer
	if err := dropInTmpl.Execute(&buf, d); err != nil {
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
		panic("rke2: a string failed to encode as JSON: " + err.Error()) // cannot happen
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func checkPrintable(v string) error {
	if v == "" {
		return fmt.Errorf("is empty")
	}
	for _, r := range v {
		if r == unicode.ReplacementChar || unicode.IsControl(r) {
			return fmt.Errorf("contains a control character (newline, tab, ...); remove it")
		}
	}
	return nil
}

func checkAssignment(v string) error {
	if err := checkPrintable(v); err != nil {
		return err
	}
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("is not of the form name=value")
	}
	return nil
}

// checkFlag accepts kube-proxy flags as RKE2 takes them: flag=value, with
// an optional leading "--" (klog's flags use "_", e.g. log_dir).
func checkFlag(v string) error {
	if err := checkAssignment(v); err != nil {
		return err
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(v, "--"), "=")
	for _, r := range name {
		if !(r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("flag name %q has characters kube-proxy flags never use", name)
		}
	}
	return nil
}

func checkEnv(v string) error {
	if err := checkAssignment(v); err != nil {
		return err
	}
	name, _, _ := strings.Cut(v, "=")
	for i, r := range name {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("variable name %q is not a valid environment variable name", name)
		}
	}
	return nil
}

// LaterOverrides lists, as sentences, the drop-ins sorted after ours that set
// one of keys without "+": RKE2 applies them after ours, so they replace
// (wipe) what we appended. files are RKE2's config files in merge order, as
// ReadFiles returns them.
func LaterOverrides(files []File, mainFile string, keys []string) []string {
	ours := DropInPath(mainFile)
	var out []string
	for _, f := range files {
		if path.Dir(f.Path) != path.Dir(ours) || path.Base(f.Path) <= DropInName {
			continue
		}
		for _, k := range keys {
			if _, set := f.Values[k]; set {
				out = append(out, fmt.Sprintf("%s sets %q without \"+\" after %s: RKE2 drops our %s+ entries; use %q there instead",
					f.Path, k, DropInName, k, k+"+"))
			}
		}
	}
	return out
}
