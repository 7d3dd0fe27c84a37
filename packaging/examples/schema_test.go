// Package examples holds deployable examples; its tests check them against
// the upstream schemas they are written for.
package examples

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// schema is the part of a CRD's openAPIV3Schema (a Kubernetes structural
// schema) an example can break: field names, types, required fields,
// enums, int-or-string and maps.
type schema struct {
	Type                 string             `yaml:"type"`
	Properties           map[string]*schema `yaml:"properties"`
	AdditionalProperties *schema            `yaml:"additionalProperties"`
	Items                *schema            `yaml:"items"`
	Required             []string           `yaml:"required"`
	Enum                 []any              `yaml:"enum"`
	AnyOf                []*schema          `yaml:"anyOf"`
	IntOrString          bool               `yaml:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool               `yaml:"x-kubernetes-preserve-unknown-fields"`
}

// check walks v (decoded YAML: maps, lists, scalars) against s and returns
// one problem per line, each naming the field's path.
func check(s *schema, v any, path string) []string {
	if s == nil {
		return nil
	}
	if s.IntOrString {
		switch v.(type) {
		case int, string:
			return nil
		}
		return []string{fmt.Sprintf("%s: %T %v is neither an integer nor a string", path, v, v)}
	}
	if len(s.AnyOf) > 0 && s.Type == "" {
		for _, alt := range s.AnyOf {
			if len(check(alt, v, path)) == 0 {
				return nil
			}
		}
		return []string{fmt.Sprintf("%s: %T %v matches none of the schema's anyOf types", path, v, v)}
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, v) {
		return []string{fmt.Sprintf("%s: %v is not one of %v", path, v, s.Enum)}
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want an object", path, v)}
		}
		return checkObject(s, m, path)
	case "array":
		l, ok := v.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: %T, want a list", path, v)}
		}
		var out []string
		for i, e := range l {
			out = append(out, check(s.Items, e, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	case "string":
		if _, ok := v.(string); !ok {
			return []string{fmt.Sprintf("%s: %T %v, want a string (quote it)", path, v, v)}
		}
	case "integer":
		if _, ok := v.(int); !ok {
			return []string{fmt.Sprintf("%s: %T %v, want an integer", path, v, v)}
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return []string{fmt.Sprintf("%s: %T %v, want true or false", path, v, v)}
		}
	case "":
		// No type and no anyOf: anything goes.
	default:
		return []string{fmt.Sprintf("%s: schema type %q is not handled by this walker", path, s.Type)}
	}
	return nil
}

func checkObject(s *schema, m map[string]any, path string) []string {
	var out []string
	for _, r := range s.Required {
		if _, ok := m[r]; !ok {
			out = append(out, fmt.Sprintf("%s.%s: required, missing", path, r))
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub, ok := s.Properties[k]
		switch {
		case ok:
			out = append(out, check(sub, m[k], path+"."+k)...)
		case s.AdditionalProperties != nil:
			out = append(out, check(s.AdditionalProperties, m[k], path+"."+k)...)
		case s.PreserveUnknown:
		default:
			names := make([]string, 0, len(s.Properties))
			for n := range s.Properties {
				names = append(names, n)
			}
			sort.Strings(names)
			out = append(out, fmt.Sprintf("%s.%s: no such field (known: %s)", path, k, strings.Join(names, ", ")))
		}
	}
	return out
}
