// Command rke2-proxy-backend; run under the name
// rke2-proxy-backend-generator it is the systemd generator too, but the
// packages install the generator's own smaller program for that
// (cmd/rke2-proxy-backend-generator).
package main

import (
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args, os.Stdout, os.Stderr))
}
