package switchover

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SetBackend returns the operator config data with its top-level backend
// key set to value, and everything else byte for byte as it was: comments,
// key order, quoting and indentation. yaml.v3 finds the key (so a
// "backend:" inside a comment, a block scalar or a nested map is never
// taken for it), then only that value's bytes are replaced; re-encoding
// the whole node tree would reindent the operator's file and move comments.
// A file without the key gets one appended; an empty file becomes one line.
//
// A UTF-8 byte order mark (Windows editors save one) is kept: the edit is
// made on the text after it, whose line 1 columns yaml.v3 counts without
// it. UTF-16 and UTF-32 files are refused: their bytes are not the text.
func SetBackend(data []byte, value string) ([]byte, error) {
	if bytes.HasPrefix(data, []byte{0xfe, 0xff}) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0, 0, 0xfe, 0xff}) {
		return nil, errors.New("the file is UTF-16 or UTF-32 (its byte order mark says so): save it as UTF-8, then switch again")
	}
	text, bom := bytes.CutPrefix(data, utf8BOM)
	if bytes.HasPrefix(text, utf8BOM) {
		// yaml.v3 would drop this one too, and so miscount line 1.
		return nil, errors.New("the file starts with two byte order marks: remove one, then switch again")
	}
	out, err := setBackendText(text, value)
	if err != nil || !bom {
		return out, err
	}
	return append(append([]byte{}, utf8BOM...), out...), nil
}

// setBackendText is SetBackend on text without a byte order mark.
func setBackendText(data []byte, value string) ([]byte, error) {
	out, err := setBackend(data, value)
	if err != nil {
		return nil, err
	}
	// The edit is textual, so prove it meant what it should: the new file
	// says backend: value and every other setting decodes as before.
	var before, after map[string]any
	if err := yaml.Unmarshal(data, &before); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	if err := yaml.Unmarshal(out, &after); err != nil || after["backend"] != value {
		return nil, fmt.Errorf("cannot set backend in this file's layout without rewriting it: put backend: %s on a line of its own at the top level", value)
	}
	delete(before, "backend")
	delete(after, "backend")
	if (len(before) > 0 || len(after) > 0) && !reflect.DeepEqual(before, after) {
		return nil, fmt.Errorf("setting backend here would change other settings: put backend: %s on a line of its own at the top level", value)
	}
	return out, nil
}

// utf8BOM is the UTF-8 byte order mark.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

func setBackend(data []byte, value string) ([]byte, error) {
	if strings.ContainsAny(value, " \t\r\n#:\"'") || value == "" {
		return nil, fmt.Errorf("backend value %q: must be a plain word such as iptables-nft", value)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse: %w (fix the YAML first; switch edits only the backend: line)", err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || isEmptyDoc(doc.Content[0]) {
		if !onlyComments(data) {
			return nil, fmt.Errorf("the document holds no settings but is not empty either (a tag or marker only?): make it empty or a map of settings")
		}
		return appendKey(data, "", value), nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("the document is a %s, not a map of settings: cannot set backend in it", kindName(top.Kind))
	}
	if top.Style&yaml.FlowStyle != 0 {
		return nil, fmt.Errorf("the settings are written as a flow map ({...}): write them one key per line so switch can set backend without rewriting the file")
	}
	var val *yaml.Node
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "backend" {
			if val != nil {
				return nil, fmt.Errorf("key backend appears twice (lines %d and %d): remove one", val.Line, top.Content[i+1].Line)
			}
			val = top.Content[i+1]
		}
	}
	if val == nil {
		// The new key lines up with the map's own keys.
		return appendKey(data, strings.Repeat(" ", top.Content[0].Column-1), value), nil
	}
	return replaceScalar(data, val, value)
}

func isEmptyDoc(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Style == 0
}

// onlyComments reports whether data is blank lines and comments, the one
// kind of settings-free file appending a key cannot turn into other YAML.
func onlyComments(data []byte) bool {
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// replaceScalar swaps the bytes of the single-line scalar val for value.
func replaceScalar(data []byte, val *yaml.Node, value string) ([]byte, error) {
	if val.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("line %d: backend is a %s, not a single value: write backend: %s", val.Line, kindName(val.Kind), value)
	}
	if val.Value == "" {
		return nil, fmt.Errorf("line %d: backend has no value: write backend: %s", val.Line, value)
	}
	var token string
	switch val.Style {
	case 0, yaml.TaggedStyle:
		token = val.Value
	case yaml.DoubleQuotedStyle:
		token = `"` + val.Value + `"`
	case yaml.SingleQuotedStyle:
		token = `'` + val.Value + `'`
	default:
		return nil, fmt.Errorf("line %d: backend is a block scalar (| or >): write it on one line as backend: %s", val.Line, value)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if val.Line < 1 || val.Line > len(lines) {
		return nil, fmt.Errorf("line %d: backend value is outside the file's %d lines", val.Line, len(lines))
	}
	line := lines[val.Line-1]
	// yaml.v3 columns count runes; backend's line is ASCII up to its value
	// in every file we can edit, which the check below confirms.
	at := val.Column - 1
	if at < 0 || at+len(token) > len(line) || string(line[at:at+len(token)]) != token {
		return nil, fmt.Errorf("line %d: cannot locate backend's value %q at column %d (escapes or a tag in the value?): write it plainly as backend: %s", val.Line, val.Value, val.Column, value)
	}
	var out bytes.Buffer
	for i, l := range lines {
		if i == val.Line-1 {
			out.Write(l[:at])
			out.WriteString(value)
			out.Write(l[at+len(token):])
			continue
		}
		out.Write(l)
	}
	return out.Bytes(), nil
}

// appendKey adds backend at the end, after a newline if the file lacks one.
func appendKey(data []byte, indent, value string) []byte {
	out := append([]byte{}, data...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, indent+"backend: "+value+"\n"...)
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.MappingNode:
		return "map"
	case yaml.SequenceNode:
		return "list"
	case yaml.AliasNode:
		return "alias"
	case yaml.ScalarNode:
		return "single value"
	}
	return "document"
}
