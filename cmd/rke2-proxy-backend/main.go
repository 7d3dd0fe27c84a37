// Command rke2-proxy-backend; installed under the name
// rke2-proxy-backend-generator it runs as a systemd generator.
package main

import (
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args, os.Stdout, os.Stderr))
}
