package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rke2"
)

// parseYAML reads the operator's file strictly: every key must be known,
// every value valid. It walks yaml.v3 nodes instead of decoding into a
// struct so that errors name the exact key path, and so that a key typed in
// the wrong case ("Backend") is refused rather than silently folded.
func parseYAML(file string, data []byte) (map[string]any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return map[string]any{}, nil // empty or comments only: defaults
		}
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		return nil, fmt.Errorf("%s: %w", file, atLine(syntaxLine(msg), fmt.Errorf("not valid YAML: %s", msg)))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", file, atLine(extra.Line, errors.New("holds more than one YAML document (a --- separator): put every key in one document")))
	}
	out := map[string]any{}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return out, nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: %w", file, atLine(top.Line, fmt.Errorf("the top level must be keys such as \"backend: auto\", not %s", describe(top))))
	}
	if err := walk(top, "", out); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// walk collects the settings of one mapping; prefix is "" or "section.".
func walk(m *yaml.Node, prefix string, out map[string]any) error {
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return atLine(k.Line, fmt.Errorf("line %d: a key must be a plain name, not %s", k.Line, describe(k)))
		}
		full := prefix + k.Value
		if line, dup := seen[k.Value]; dup {
			return atLine(k.Line, fmt.Errorf("key %q is set twice (lines %d and %d): keep one", full, line, k.Line))
		}
		seen[k.Value] = k.Line
		if isSection(full) {
			if isNull(v) {
				continue
			}
			if v.Kind != yaml.MappingNode {
				return atLine(v.Line, fmt.Errorf("%s: must hold keys (%s), not %s", full, strings.Join(validKeys(full+"."), ", "), describe(v)))
			}
			if err := walk(v, full+".", out); err != nil {
				return err
			}
			continue
		}
		s, ok := lookup(full)
		if !ok {
			return atLine(k.Line, unknownKey(full, prefix))
		}
		if isNull(v) {
			continue // "modules:" with every item commented out means the default
		}
		val, err := fromNode(s, v)
		if err != nil {
			return atLine(v.Line, fmt.Errorf("%s: %w", full, err))
		}
		out[full] = val
	}
	return nil
}

func unknownKey(full, prefix string) error {
	where := "valid keys"
	if prefix != "" {
		where = "valid keys under " + strings.TrimSuffix(prefix, ".")
	}
	if !keyName(full) {
		// Not even a key name: likely the wrong file (a link to another
		// file planted here); never quote what it holds.
		return fmt.Errorf("a key that is not a key name, so this is likely not the right file (%s: %s)", where, strings.Join(validKeys(prefix), ", "))
	}
	return fmt.Errorf("unknown key %q (%s: %s)", full, where, strings.Join(validKeys(prefix), ", "))
}

// keyName reports whether s could be a key of this file (dotted lower-case
// words, as the schema's keys are, or a near miss such as kube-proxy-env).
func keyName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

func fromNode(s setting, v *yaml.Node) (any, error) {
	if s.kind == kindList {
		if v.Kind != yaml.SequenceNode {
			return nil, fmt.Errorf("must be a list such as [a, b], not %s", describe(v))
		}
		items := make([]string, 0, len(v.Content))
		for i, item := range v.Content {
			if item.Kind != yaml.ScalarNode || isNull(item) {
				return nil, fmt.Errorf("item %d must be a single value, not %s", i+1, describe(item))
			}
			items = append(items, item.Value)
		}
		out, err := convertList(s, items)
		var item *itemError
		if errors.As(err, &item) {
			err = atLine(v.Content[item.index].Line, err)
		}
		return out, err
	}
	if v.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("must be a single value, not %s", describe(v))
	}
	return convert(s, v.Value)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// describe says what n is in an error: its kind as RKE2's config errors
// name it (rke2.KindName), or for a scalar its value.
func describe(n *yaml.Node) string {
	switch kind := rke2.KindName(n); kind {
	case "alias":
		return "an alias"
	case "scalar":
		if isNull(n) {
			return "an empty value"
		}
		return fmt.Sprintf("the value %q", n.Value)
	default:
		return "a " + kind
	}
}
