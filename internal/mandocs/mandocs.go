// Package mandocs turns the command tree and the config schema into man
// pages (roff, written directly: help text is plain text, and a markdown
// renderer would read "<RKE2 config>" as a tag) and shell completions at
// package build time, so they never drift from the flags and keys the
// binary really has. It lives outside the binary
// (cmd/rke2-proxy-backend-docs) so none of it runs on the generator's boot
// path.
package mandocs

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/version"
)

// Completion file names as the shells look them up in their vendor
// directories (packaging installs them there without renaming).
const (
	BashCompletionFile = "rke2-proxy-backend.bash"
	ZshCompletionFile  = "_rke2-proxy-backend"
	FishCompletionFile = "rke2-proxy-backend.fish"
)

// DateFromEnv honours SOURCE_DATE_EPOCH (reproducible-builds.org) so the same
// source always yields byte-identical man pages and packages.
func DateFromEnv() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Now().UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970 (e.g. from git log -1 --format=%%ct): %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// Write writes man1/<page>.1 for every command, man5/rke2-proxy-backend-config.5
// for the operator config, and completions/ for bash, zsh and fish.
func Write(root *cobra.Command, dir string, date time.Time) error {
	h := header{date: date.Format("2006-01-02"), source: "rke2-proxy-backend " + version.Version, manual: "rke2-proxy-backend manual"}
	pages := map[string]string{filepath.Join("man5", ConfigPage+".5"): configPage(h)}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if !documented(c) {
			return
		}
		pages[filepath.Join("man1", pageName(c)+".1")] = commandPage(c, h)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for rel, text := range pages {
		if err := writeFile(filepath.Join(dir, rel), text); err != nil {
			return err
		}
	}

	compDir := filepath.Join(dir, "completions")
	if err := os.MkdirAll(compDir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", compDir, err)
	}
	shells := []struct {
		file string
		gen  func(path string) error
	}{
		{BashCompletionFile, func(p string) error { return root.GenBashCompletionFileV2(p, true) }},
		{ZshCompletionFile, root.GenZshCompletionFile},
		{FishCompletionFile, func(p string) error { return root.GenFishCompletionFile(p, true) }},
	}
	for _, s := range shells {
		p := filepath.Join(compDir, s.file)
		if err := s.gen(p); err != nil {
			return fmt.Errorf("write completion %s: %w", p, err)
		}
	}
	return nil
}

func writeFile(p, text string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(p), err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		return fmt.Errorf("write man page %s: %w", p, err)
	}
	return nil
}
