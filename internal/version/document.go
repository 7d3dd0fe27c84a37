package version

// Document is what the version command prints: with -o json this
// document, whose schema counts incompatible changes to it as detect's
// does; else its Text.
type Document struct {
	Schema  int    `json:"schema"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Current is this binary's Document.
func Current() Document { return Document{Schema: 1, Name: "rke2-proxy-backend", Version: Version} }

// Text is the one line `rke2-proxy-backend version` prints.
func (d Document) Text() string { return d.Name + " " + d.Version + "\n" }
