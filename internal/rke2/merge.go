package rke2

import (
	"fmt"
	"sort"
	"strings"
)

// Merge folds files into the effective config exactly as RKE2 does (k3s
// pkg/configfilearg readConfigFile): entries are applied in file order; a
// key ending in "+" appends to an earlier value (a scalar becoming a
// one-item list); a key without "+", or a "+" key nothing set before,
// replaces the value. Keys are stored without the "+".
func Merge(files []File) Effective {
	eff := Effective{
		Values:     map[string]any{},
		Origin:     map[string]string{},
		ItemOrigin: map[string][]string{},
		Line:       map[string]int{},
		ItemLine:   map[string][]int{},
		Assigned:   map[string][]Setting{},
		Files:      []string{},
	}
	for _, f := range files {
		eff.Files = append(eff.Files, f.Path)
		for _, it := range fileItems(f) {
			key, isAppend := strings.CutSuffix(it.Key, "+")
			value := normalise(it.Value)
			old, seen := eff.Values[key]
			if seen && isAppend {
				add := toSlice(value)
				eff.ItemOrigin[key] = append(itemOrigins(eff, key, old), repeat(f.Path, len(add))...)
				eff.ItemLine[key] = append(itemLines(eff, key, old), repeat(it.Line, len(add))...)
				eff.Values[key] = append(toSlice(old), add...)
			} else {
				eff.Values[key] = value
				eff.Assigned[key] = append(eff.Assigned[key], Setting{Value: toText(value), File: f.Path, Line: it.Line})
				if list, ok := value.([]string); ok {
					eff.ItemOrigin[key] = repeat(f.Path, len(list))
					eff.ItemLine[key] = repeat(it.Line, len(list))
				} else {
					delete(eff.ItemOrigin, key)
					delete(eff.ItemLine, key)
				}
			}
			eff.Origin[key] = f.Path
			eff.Line[key] = it.Line
		}
	}
	// RKE2 renders an empty value as "--key=" (an empty string).
	for k, v := range eff.Values {
		if v == nil {
			eff.Values[k] = ""
		}
	}
	return eff
}

// fileItems returns f's entries in the order RKE2 applies them.
func fileItems(f File) []Item {
	if len(f.Items) > 0 {
		return f.Items
	}
	keys := make([]string, 0, len(f.Values))
	for k := range f.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	items := make([]Item, len(keys))
	for i, k := range keys {
		items[i] = Item{Key: k, Value: f.Values[k]}
	}
	return items
}

// itemOrigins returns the per-item origins of old, the value key holds now.
func itemOrigins(eff Effective, key string, old any) []string {
	if _, ok := old.([]string); ok {
		return append([]string(nil), eff.ItemOrigin[key]...)
	}
	return repeat(eff.Origin[key], len(toSlice(old)))
}

// toSlice is RKE2's conversion of a value to list items when appending: a
// string is one item (even ""), a list is itself, anything else is its text
// trimmed, and an empty text is no item at all.
func toSlice(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []string:
		return append([]string(nil), t...)
	}
	s := strings.TrimSpace(toText(v))
	if s == "" {
		return nil
	}
	return []string{s}
}

// normalise maps values from hand-built Files (JSON, tests) onto ParseFile's
// types so that Merge and the accessors see one shape.
func normalise(v any) any {
	switch t := v.(type) {
	case nil, string, bool, int, float64, []string:
		return t
	case []any:
		items := make([]string, len(t))
		for i, x := range t {
			items[i] = toText(normalise(x))
		}
		return items
	case int64:
		return int(t)
	}
	return fmt.Sprint(v)
}

// itemLines is itemOrigins for lines.
func itemLines(eff Effective, key string, old any) []int {
	if _, ok := old.([]string); ok {
		return append([]int(nil), eff.ItemLine[key]...)
	}
	return repeat(eff.Line[key], len(toSlice(old)))
}

func repeat[T any](s T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = s
	}
	return out
}
