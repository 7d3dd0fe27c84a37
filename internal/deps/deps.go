// Package deps pins the project's direct dependencies while the packages
// that use them are being written. Removed once every one has a real user.
package deps

import (
	_ "github.com/coreos/go-iptables/iptables"
	_ "github.com/coreos/go-systemd/v22/journal"
	_ "github.com/coreos/go-systemd/v22/unit"
	_ "github.com/google/nftables"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "github.com/spf13/viper"
	_ "golang.org/x/sys/unix"
	_ "gopkg.in/yaml.v3"
)
