package census

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Sentence is the verdict as one line an operator reads.
func (c *Census) Sentence() string {
	switch c.Verdict {
	case Yes:
		return "can move to a kernel without legacy xtables: yes, " + c.Reason
	case No:
		return "can move to a kernel without legacy xtables: no, because " + c.Reason
	}
	return "can move to a kernel without legacy xtables: cannot tell, because " + c.Reason
}

// Text is the verdict, then one row per namespace: who, the legacy tables
// holding rules with their writers, the nftables tables needing nft_compat.
func (c *Census) Text() string {
	var b strings.Builder
	b.WriteString(c.Sentence() + "\n\n")
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NETNS\tWHO\tLEGACY XTABLES\tNFT_COMPAT")
	for _, n := range c.Namespaces {
		ns := strconv.FormatUint(n.Inode, 10)
		if n.Host {
			ns = "host"
		}
		legacy, compat := "-", "-"
		if n.Error != "" {
			legacy, compat = "not read: "+n.Error, ""
		}
		if len(n.EmptyLegacy) > 0 && n.Error == "" {
			legacy = "empty: " + strings.Join(n.EmptyLegacy, ", ")
		}
		if len(n.Legacy) > 0 {
			var parts []string
			for _, t := range n.Legacy {
				parts = append(parts, fmt.Sprintf("%s %s (%d rules, %d chains; writer %s)", t.Family, t.Table, t.Rules, t.UserChains, strings.Join(t.Writers, ", ")))
			}
			legacy = strings.Join(parts, "; ")
		}
		if len(n.NFTCompat) > 0 {
			var parts []string
			for _, t := range n.NFTCompat {
				parts = append(parts, fmt.Sprintf("%s %s (%d rules: %s)", t.Family, t.Table, t.Rules, strings.Join(append(append([]string{}, t.Matches...), t.Targets...), ", ")))
			}
			compat = strings.Join(parts, "; ")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", ns, n.ref().Who(), legacy, compat)
	}
	_ = w.Flush()
	if c.NotVisited > 0 {
		fmt.Fprintf(&b, "\n%s not visited in this round (--max-namespaces).\n", plural(c.NotVisited, "namespace"))
	}
	if c.Exited > 0 {
		fmt.Fprintf(&b, "\n%s gone during the census (every process exited): nothing to read.\n", plural(c.Exited, "namespace"))
	}
	if !c.PodNames && c.PodUIDs() {
		why := c.PodNamesReason
		if why == "" {
			why = "no Kubernetes API was read"
		}
		b.WriteString("\nPods are named by UID only: " + why + ". Their names: kubectl get pods -A -o custom-columns=UID:.metadata.uid,NAMESPACE:.metadata.namespace,NAME:.metadata.name | grep UID\n")
	}
	return b.String()
}
