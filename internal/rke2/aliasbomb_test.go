package rke2

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// aliasBomb is the "billion laughs" of YAML: each level is a list of
// fanout aliases to the level before, so levels*fanout aliases in a few
// hundred bytes stand for fanout^levels values. asMap nests the last level
// in a mapping, which takes the other decode path.
func aliasBomb(levels, fanout int, asMap bool) string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol]\n")
	for i := 1; i <= levels; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), fanout), ", ")
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, refs)
	}
	if asMap {
		fmt.Fprintf(&b, "kube-proxy-arg: {x: *a%d}\n", levels)
	} else {
		fmt.Fprintf(&b, "kube-proxy-arg: *a%d\n", levels)
	}
	return b.String()
}

func TestParseFileStopsAnAliasBomb(t *testing.T) {
	for _, asMap := range []bool{false, true} {
		start := time.Now()
		_, err := ParseFile("/etc/rancher/rke2/config.yaml", []byte(aliasBomb(10, 9, asMap)))
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("asMap=%v: took %s", asMap, took)
		}
		if err == nil || !strings.Contains(err.Error(), "RKE2 config /etc/rancher/rke2/config.yaml") ||
			!strings.Contains(err.Error(), "expands to more than 100000 values through its aliases") {
			t.Errorf("asMap=%v: err = %v; want the expansion limit, naming the file", asMap, err)
		}
	}
	// Ordinary aliases stay fine.
	f, err := ParseFile("c", []byte("x: &args [a=1, b=2]\nkube-proxy-arg: *args\n"))
	if err != nil || len(f.Values["kube-proxy-arg"].([]string)) != 2 {
		t.Errorf("plain alias: %v %v", f.Values, err)
	}
}

// FuzzParseFileAliases builds alias trees of any shape: a file either
// parses into a bounded number of values or fails naming the file.
func FuzzParseFileAliases(f *testing.F) {
	f.Add(uint8(10), uint8(9), false)
	f.Add(uint8(3), uint8(2), true)
	f.Add(uint8(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, levels, fanout uint8, asMap bool) {
		l, n := int(levels%20), int(fanout%16)+1
		file, err := ParseFile("c", []byte(aliasBomb(l, n, asMap)))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "RKE2 config c:") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		total := 0
		for _, v := range file.Values {
			if list, ok := v.([]string); ok {
				total += len(list)
			}
		}
		if total > maxExpandedNodes {
			t.Fatalf("%d values expanded, budget %d", total, maxExpandedNodes)
		}
	})
}
