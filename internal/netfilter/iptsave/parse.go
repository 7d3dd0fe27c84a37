// Package iptsave parses iptables-save text (the legacy reader streams
// iptables-legacy-save through it; cleanup reads its own dumps). iptables'
// argument quoting and splitting, which the renderers share, is in vocab.
package iptsave

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/rules"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/vocab"
)

// Parse parses iptables-save (or iptables-restore) text of one
// family into tables. Counters ("[0:0]", "-c" prefixes) and comment lines
// are dropped; rule text is kept exactly as printed after "-A CHAIN ".
// Each rule's Comment and Jump are filled in (Jump only for targets that
// are chains of the same table).
func Parse(r io.Reader, fam rules.Family) ([]rules.Table, error) {
	return ParseShallow(r, fam, nil)
}

// ParseShallow is Parse for checks that look only
// at some chains: the rules of every chain for which skip returns true are
// kept as rules.Rule{NotRead: true} placeholders (so they still count) instead of being
// copied and tokenised. kube-proxy's per-service chains are most of a large
// ruleset and verify never looks inside them.
func ParseShallow(r io.Reader, fam rules.Family, skip func(chain string) bool) ([]rules.Table, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var (
		tables []rules.Table
		cur    *rules.Table
		index  map[string]int // chain name -> index in cur.Chains
		n      int
		// Rules are annotated as they are read, so parsing overlaps the
		// save tool's streaming output; a chain declared after a rule (never
		// in iptables-save output) makes the table be annotated again.
		isChain     = func(s string) bool { _, ok := index[s]; return ok }
		ruleSeen    bool
		lateDeclare bool
		// skipped[i] caches skip(cur.Chains[i].Name), so a skipped chain's
		// rule lines are counted straight from the scanner's bytes.
		skipped []bool
	)
	for sc.Scan() {
		n++
		raw := sc.Bytes()
		if (bytes.HasPrefix(raw, []byte("-A ")) || bytes.HasPrefix(raw, []byte("["))) && vocab.EndsInQuote(raw) {
			// A quoted argument (a comment anyone with NET_ADMIN can set)
			// holds a newline: iptables-save prints it raw, so the rule
			// goes on until the quote closes, whatever the next lines say.
			var err error
			if raw, err = joinQuoted(sc, raw, &n); err != nil {
				return nil, err
			}
		}
		if skip != nil && cur != nil && bytes.HasPrefix(raw, []byte("-A ")) {
			name, _, _ := bytes.Cut(raw[3:], []byte(" "))
			if i, ok := index[string(name)]; ok && skipped[i] {
				ruleSeen = true
				cur.Chains[i].Rules = append(cur.Chains[i].Rules, rules.Rule{NotRead: true})
				continue
			}
		}
		line := strings.TrimRight(string(raw), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		switch {
		case strings.HasPrefix(line, "*"):
			if cur != nil {
				return nil, fmt.Errorf("line %d: table %q starts before table %q was committed", n, line[1:], cur.Name)
			}
			name := line[1:]
			if name == "" || strings.ContainsAny(name, " \t") {
				return nil, fmt.Errorf("line %d: bad table name %q", n, name)
			}
			cur, index = &rules.Table{Family: fam, Name: name}, map[string]int{}
			ruleSeen, lateDeclare, skipped = false, false, nil
		case line == "COMMIT":
			if cur == nil {
				return nil, fmt.Errorf("line %d: COMMIT outside a table", n)
			}
			if lateDeclare {
				annotateJumps(cur)
			}
			tables = commitTable(tables, *cur)
			cur = nil
		case strings.HasPrefix(line, ":"):
			if cur == nil {
				return nil, fmt.Errorf("line %d: chain %q outside a table", n, line)
			}
			f := strings.Fields(line[1:])
			if len(f) < 2 || f[0] == "" {
				return nil, fmt.Errorf("line %d: want \":CHAIN POLICY [packets:bytes]\", got %q", n, line)
			}
			if _, dup := index[f[0]]; dup {
				return nil, fmt.Errorf("line %d: chain %q declared twice in table %q", n, f[0], cur.Name)
			}
			lateDeclare = lateDeclare || ruleSeen
			c := rules.Chain{Name: f[0]}
			switch {
			case rules.IsBuiltinChain(cur.Name, c.Name):
				c.Hook = strings.ToLower(c.Name)
				c.Policy = f[1]
				if c.Policy == "-" {
					// Restore input may say "keep the policy"; iptables-save
					// always prints the real one, ACCEPT on a new table.
					c.Policy = "ACCEPT"
				}
			case f[1] != "-":
				return nil, fmt.Errorf("line %d: user-defined chain %q in table %q has policy %q; only built-in chains have one", n, c.Name, cur.Name, f[1])
			}
			index[c.Name] = len(cur.Chains)
			cur.Chains = append(cur.Chains, c)
			skipped = append(skipped, skip != nil && skip(c.Name))
		default:
			if cur == nil {
				return nil, fmt.Errorf("line %d: rule outside a table: %q", n, line)
			}
			chain, text, err := splitAppend(line)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n, err)
			}
			i, ok := index[chain]
			if !ok {
				return nil, fmt.Errorf("line %d: rule for undeclared chain %q in table %q", n, chain, cur.Name)
			}
			ruleSeen = true
			if skipped[i] {
				cur.Chains[i].Rules = append(cur.Chains[i].Rules, rules.Rule{NotRead: true})
				continue
			}
			cur.Chains[i].Rules = append(cur.Chains[i].Rules, Rule(text, isChain))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if cur != nil {
		return nil, fmt.Errorf("table %q has no COMMIT", cur.Name)
	}
	return tables, nil
}

// commitTable adds t to tables the way iptables-restore commits it: a
// table given again replaces the earlier one whole (restore flushes a table
// at its "*name" line), so only the last block of a name counts.
func commitTable(tables []rules.Table, t rules.Table) []rules.Table {
	for i := range tables {
		if tables[i].Name == t.Name && tables[i].Family == t.Family {
			tables[i] = t
			return tables
		}
	}
	return append(tables, t)
}

// joinQuoted reads lines after first until its open quote closes and
// returns them joined with the newlines they stood for.
func joinQuoted(sc *bufio.Scanner, first []byte, n *int) ([]byte, error) {
	start := *n
	joined := append([]byte(nil), first...)
	for quoted := true; quoted; {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return nil, fmt.Errorf("line %d: %w", *n+1, err)
			}
			return nil, fmt.Errorf("line %d: quoted argument never ends (unterminated \")", start)
		}
		*n++
		// The newline sits between the pieces, so no escape spans it.
		quoted = vocab.QuoteState(sc.Bytes(), quoted)
		joined = append(append(joined, '\n'), sc.Bytes()...)
	}
	return joined, nil
}

// splitAppend cuts "[-c pkts bytes | [pkts:bytes]] -A CHAIN rest".
func splitAppend(line string) (chain, text string, err error) {
	rest := line
	if strings.HasPrefix(rest, "[") {
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return "", "", fmt.Errorf("unterminated counter in %q", line)
		}
		rest = strings.TrimLeft(rest[end+1:], " ")
	}
	f := strings.SplitN(rest, " ", 3)
	if len(f) < 2 || f[0] != "-A" || f[1] == "" {
		return "", "", fmt.Errorf("want \"-A CHAIN ...\", got %q", line)
	}
	chain = f[1]
	if len(f) == 3 {
		text = f[2]
	}
	text, err = stripCounters(text)
	return chain, text, err
}

// stripCounters removes "-c PKTS BYTES" which iptables-save -c prints.
func stripCounters(text string) (string, error) {
	rest, ok := strings.CutPrefix(text, "-c ")
	if !ok {
		return text, nil
	}
	f := strings.SplitN(rest, " ", 3)
	if len(f) < 2 {
		return "", fmt.Errorf("bad counters in %q", text)
	}
	if len(f) == 2 {
		return "", nil
	}
	return f[2], nil
}

func annotateJumps(t *rules.Table) {
	chains := make(map[string]bool, len(t.Chains))
	for _, c := range t.Chains {
		chains[c.Name] = true
	}
	for i := range t.Chains {
		for j := range t.Chains[i].Rules {
			r := &t.Chains[i].Rules[j]
			*r = Rule(r.Text, func(s string) bool { return chains[s] })
		}
	}
}

// Rule returns a Rule for iptables argument text with Comment and
// Jump filled in. isChain tells chain targets (KUBE-MARK-MASQ) from
// extension targets (MARK): only a chain of the same table is a jump.
// It runs for every rule of a large ruleset, so it scans words in place
// instead of splitting the text.
func Rule(text string, isChain func(string) bool) rules.Rule {
	r := rules.Rule{Text: text}
	prev := ""
	for i := 0; i < len(text); {
		word, next := vocab.NextArg(text, i)
		switch prev {
		case "--comment":
			if r.Comment == "" {
				r.Comment = word
			}
		case "-j", "--jump", "-g", "--goto":
			if isChain(word) {
				r.Jump = word
			}
		}
		prev, i = word, next
	}
	return r
}
