package config

import (
	"fmt"
	"strings"
)

// Key describes one setting for documentation (the config file's man page),
// read from the same table the loader checks against, so the two cannot
// drift.
type Key struct {
	Path    string // dotted key path, e.g. "verify.wait"
	Type    string // "string", "boolean", "list of strings" or "duration"
	Default string // the default as written in YAML, e.g. "[]" or "5m"
	Env     string // the environment variable that overrides it
}

// Keys lists every setting in documentation order.
func Keys() []Key {
	out := make([]Key, 0, len(settings))
	for _, s := range settings {
		out = append(out, Key{Path: s.path, Type: kindName(s.kind), Default: yamlDefault(s.def), Env: envName(s.path)})
	}
	return out
}

// kindName names k for the documentation. A switch, not a map: the
// generator links this package, and a map would be built at every start.
func kindName(k kind) string {
	switch k {
	case kindString:
		return "string"
	case kindBool:
		return "boolean"
	case kindList:
		return "list of strings"
	case kindDuration:
		return "duration"
	}
	return ""
}

func yamlDefault(v any) string {
	switch d := v.(type) {
	case []string:
		return "[" + strings.Join(d, ", ") + "]"
	case string:
		if d == "" {
			return `""`
		}
		return d
	}
	return fmt.Sprint(v)
}
