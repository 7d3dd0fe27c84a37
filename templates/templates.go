// Package templates holds the text templates rke2-proxy-backend renders,
// embedded so the binary needs no files at run time. Each template gets only
// values its renderer has validated and quoted.
package templates

import _ "embed"

// RKE2DropIn is the RKE2 config drop-in apply writes
// (/etc/rancher/rke2/config.yaml.d/60-proxy-backend.yaml). It expects the
// functions "yaml" (a string as a safe YAML scalar) and the fields of
// rke2.DropIn.
//
//go:embed rke2-dropin.yaml.tmpl
var RKE2DropIn string
