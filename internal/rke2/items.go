package rke2

// Setting is one item of a list-valued key as RKE2 passes it on (one
// --key=item flag), with the file and the line of the key that set it.
type Setting struct {
	Value string
	File  string
	Line  int
}

// Settings returns key's items (Strings) with where each came from.
func (e Effective) Settings(key string) []Setting {
	items, from := e.Strings(key), e.sources(key)
	lines := e.ItemLine[key]
	if _, isList := e.Values[key].([]string); !isList {
		lines = []int{e.Line[key]}
	}
	out := make([]Setting, len(items))
	for i, v := range items {
		out[i].Value = v
		if i < len(from) {
			out[i].File = from[i]
		}
		if i < len(lines) {
			out[i].Line = lines[i]
		}
	}
	return out
}
