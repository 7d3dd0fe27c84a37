// Command rke2-proxy-backend-docs writes the man pages and shell completions
// of rke2-proxy-backend into a directory; `make packages` runs it at build
// time. It is not shipped.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/cli"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/mandocs"
)

func main() {
	dir := flag.String("dir", "", "output directory (created): man1/*.1, man5/*.5 and completions/")
	flag.Parse()
	if *dir == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: rke2-proxy-backend-docs --dir DIR")
		os.Exit(2)
	}
	date, err := mandocs.DateFromEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rke2-proxy-backend-docs:", err)
		os.Exit(2)
	}
	if err := mandocs.Write(cli.NewRootCommand(io.Discard, io.Discard), *dir, date); err != nil {
		fmt.Fprintln(os.Stderr, "rke2-proxy-backend-docs:", err)
		os.Exit(1)
	}
}
