package facts

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/hostfs"
)

// ParseCmdline splits a kernel command line into words the way systemd does
// (extract_first_word with EXTRACT_UNQUOTE|EXTRACT_RELAX): whitespace
// separates words, single or double quotes group (and are removed) even in
// the middle of a word (foo="a b" is the word foo=a b), and an unterminated
// quote runs to the end of the line. Empty words are dropped.
func ParseCmdline(s string) []string {
	words := []string{}
	var cur strings.Builder
	inWord := false
	var quote rune
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+size] // keeps invalid UTF-8 bytes as they are
		i += size
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteString(raw)
			}
		case r == '"' || r == '\'':
			quote = r
			inWord = true
		case unicode.IsSpace(r) || r == 0:
			if inWord && cur.Len() > 0 {
				words = append(words, cur.String())
			}
			cur.Reset()
			inWord = false
		default:
			cur.WriteString(raw)
			inWord = true
		}
	}
	if inWord && cur.Len() > 0 {
		words = append(words, cur.String())
	}
	return words
}

// inContainer tells whether systemd would treat this root as a container:
// systemd-nspawn and other managers write /run/systemd/container, and
// every container manager puts container= into PID 1's environment.
func (p *probe) inContainer() bool {
	if p.root.Exists(hostfs.SystemdContainer) {
		return true
	}
	env, err := p.root.ReadFile(hostfs.Proc1Environ)
	if err != nil {
		return false
	}
	for _, kv := range strings.Split(string(env), "\x00") {
		if strings.HasPrefix(kv, "container=") {
			return true
		}
	}
	return false
}

// cmdline reads the command line systemd honours: /proc/cmdline, or inside
// a container PID 1's arguments (minus argv[0] and PID 1's own --options,
// which systemd filters out too).
func (p *probe) cmdline() []string {
	if p.image {
		p.notInImage("The kernel command line (%s=...): the bootloader's, read by the generator when the node boots.", "rke2.proxy_backend")
		return []string{}
	}
	if p.inContainer() {
		data, ok := p.read(hostfs.Proc1Cmdline, "the kernel command line is unknown")
		if !ok {
			p.problem(hostfs.Proc1Cmdline + " is missing in this container: kernel command line overrides are unknown.")
			return []string{}
		}
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		words := []string{}
		for i, a := range args {
			if i == 0 || strings.HasPrefix(a, "--") || a == "" {
				continue
			}
			words = append(words, a)
		}
		return words
	}
	data, ok := p.read(hostfs.ProcCmdline, "kernel command line overrides are unknown")
	if !ok {
		if p.absent(hostfs.ProcCmdline) {
			p.problem(hostfs.ProcCmdline + " is missing: kernel command line overrides are unknown.")
		}
		return []string{}
	}
	return forSystemd(ParseCmdline(string(data)))
}

// forSystemd drops "--" and every word after it: the kernel hands those to
// init as its arguments, not as kernel parameters, and systemd does not
// read them as settings; neither may we.
func forSystemd(words []string) []string {
	for i, w := range words {
		if w == "--" {
			return words[:i]
		}
	}
	return words
}

// ReadCmdline returns the kernel command line words exactly as Probe reads
// them (PID 1's arguments inside a container), for commands that need the
// overrides but not the other facts.
func ReadCmdline(root hostfs.Root) []string {
	return (&probe{root: root}).cmdline()
}
