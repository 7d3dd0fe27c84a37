package rke2

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"
)

// yaml11Bool reads the plain scalars YAML 1.1 reads as booleans. RKE2 (via
// k3s's configfilearg) decodes config files with gopkg.in/yaml.v2, a YAML 1.1
// parser, so "disable-kube-proxy: yes" means true there; yaml.v3 alone would
// read the string "yes" and we would disagree with RKE2. A switch, not a
// map: the generator links this package, and a map would be built at every
// boot's start, RKE2 or not.
func yaml11Bool(s string) (value, ok bool) {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// ParseFile decodes one RKE2 config file. Values are a string, bool, int,
// float64, []string (list items converted to text, as RKE2 turns each into a
// --key=item flag) or nil (an empty value). Errors name the file and, for
// bad YAML, the line.
func ParseFile(name string, data []byte) (File, error) {
	return parseFileOf(name, data, ProgramRKE2)
}

// parseFileOf is ParseFile whose errors name program's config.
func parseFileOf(name string, data []byte, program string) (File, error) {
	f := File{Path: name, Values: map[string]any{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return File{}, fmt.Errorf("%s config %s: invalid YAML: %w", program, name, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return f, nil // empty file or only comments
	}
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.ShortTag() == "!!null" {
		return f, nil
	}
	if top.Kind != yaml.MappingNode {
		return File{}, fmt.Errorf("%s config %s: line %d: expected a mapping of keys to values, found a %s", program, name, top.Line, KindName(top))
	}
	d := &decoder{budget: maxExpandedNodes}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return File{}, fmt.Errorf("%s config %s: line %d: a key must be a plain word, found a %s", program, name, k.Line, KindName(k))
		}
		value, err := d.value(v, 0)
		if err != nil {
			return File{}, fmt.Errorf("%s config %s: line %d: key %q: %w", program, name, v.Line, k.Value, err)
		}
		f.Items = append(f.Items, Item{Key: k.Value, Value: value, Line: k.Line})
		f.Values[k.Value] = value
	}
	return f, nil
}

// maxAliasDepth stops alias chains early.
const maxAliasDepth = 16

// maxExpandedNodes bounds how many nodes one file may stand for once its
// aliases are expanded. Depth alone does not stop an alias bomb: ten levels
// of nine aliases each is 9^10 nodes from a few hundred bytes. A real RKE2
// config has tens to hundreds of nodes.
const maxExpandedNodes = 100_000

// decoder expands values against one budget per file.
type decoder struct{ budget int }

// spend counts one expanded node.
func (d *decoder) spend() error {
	d.budget--
	if d.budget < 0 {
		// Formatted here, not at init: the generator links this package.
		return fmt.Errorf("the file expands to more than %d values through its aliases (&anchor / *alias): RKE2 configs never need that many; remove the aliases", maxExpandedNodes)
	}
	return nil
}

func (d *decoder) value(n *yaml.Node, depth int) (any, error) {
	if err := d.spend(); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.AliasNode:
		if depth >= maxAliasDepth || n.Alias == nil {
			return nil, fmt.Errorf("alias nested too deeply")
		}
		return d.value(n.Alias, depth+1)
	case yaml.ScalarNode:
		return decodeScalar(n)
	case yaml.SequenceNode:
		items := make([]string, 0, len(n.Content))
		for _, c := range n.Content {
			item, err := d.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			items = append(items, toText(item))
		}
		return items, nil
	default:
		// A nested mapping is no RKE2 flag value; RKE2 would pass its Go
		// rendering as text, so keep it as text rather than fail. The
		// walk first charges every node the decode would expand.
		if err := d.walk(n, depth); err != nil {
			return nil, err
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		return fmt.Sprint(v), nil
	}
}

// walk charges the budget for every node under n, aliases expanded.
func (d *decoder) walk(n *yaml.Node, depth int) error {
	if depth > maxAliasDepth*4 {
		return fmt.Errorf("values nested too deeply")
	}
	for _, c := range n.Content {
		if err := d.spend(); err != nil {
			return err
		}
		next := c
		if c.Kind == yaml.AliasNode {
			if c.Alias == nil {
				return fmt.Errorf("alias nested too deeply")
			}
			next = c.Alias
		}
		if err := d.walk(next, depth+1); err != nil {
			return err
		}
	}
	return nil
}

func decodeScalar(n *yaml.Node) (any, error) {
	if n.Style == 0 && n.ShortTag() == "!!str" {
		if b, ok := yaml11Bool(n.Value); ok {
			return b, nil
		}
	}
	if n.ShortTag() == "!!null" {
		return nil, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	switch v.(type) {
	case string, bool, int, float64:
		return v, nil
	}
	// Big integers, timestamps and other exotic scalars: keep the text as written.
	return n.Value, nil
}

// toText renders a decoded value the way RKE2 turns it into a flag value.
func toText(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// KindName names n's kind as the config errors of this tool say it: list,
// mapping, alias, or scalar for anything else.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	case yaml.AliasNode:
		return "alias"
	}
	return "scalar"
}
