// Command rke2-proxy-backend-generator is rke2-proxy-backend's systemd
// generator on its own: the packages install it in /usr/libexec and link
// it from the generator directory. It links the boot path only (the probe,
// the config, the decision, the drop-ins), a third of the tool, so the
// start that every boot and every daemon-reload pays is a third too.
package main

import (
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/generator"
)

func main() {
	os.Exit(generator.Main(os.Args[1:], os.Stderr))
}
