package kubeproxy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/backend"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/nstest"
	"github.com/rke2-proxy-backend/rke2-proxy-backend/internal/testkit/oracle"
)

// expfmtSample is one sample as test/kubeproxy/expfmtdiff prints what the
// Prometheus library's parser read.
type expfmtSample struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Value  string            `json:"value"`
}

type expfmtPage struct {
	File    string         `json:"file"`
	Error   string         `json:"error"`
	Samples []expfmtSample `json:"samples"`
}

// Pages every exposition parser must read alike: the format's corners
// kube-proxy's page may use (escapes, empty label sets, timestamps, the
// special values, spacing, exponents, a trailing comma) and a histogram
// with fractional counts.
var agreedPages = map[string]string{
	"escapes": "# HELP x a \\\\ help\n# TYPE x gauge\nx 1\ny{a=\"b\\\"c\\\\d\\ne\",z=\"\"} +Inf 1700000000000\n\nw{} NaN\nv -Inf\n",
	"spacing": "u{ a = \"1\" , b=\"2\",} 1.5e-3\t1700000000000\nt 12e3\ns   -0\n",
	"histogram": "# TYPE h histogram\nh_bucket{ip_family=\"IPv4\",le=\"0.001\"} 0\nh_bucket{ip_family=\"IPv4\",le=\"0.5\"} 1.5\n" +
		"h_bucket{ip_family=\"IPv4\",le=\"+Inf\"} 3\nh_sum{ip_family=\"IPv4\"} 0.75\nh_count{ip_family=\"IPv4\"} 3\n",
	"summary": "# TYPE q summary\nq{quantile=\"0.5\"} 0.25\nq{quantile=\"0.99\"} 1\nq_sum 4\nq_count 8\n",
}

// Pages both must refuse: sample lines that break the format.
var refusedPages = map[string]string{
	"no value":        "x\n",
	"word value":      "x y\n",
	"unclosed labels": "x{a=\"b\" 1\n",
	"bare label":      "x{a=b} 1\n",
	"label twice":     "x{a=\"b\",a=\"c\"} 1\n",
	"bad escape":      "x{a=\"\\q\"} 1\n",
	"digit first":     "9x 1\n",
	"float timestamp": "x 1 1.5\n",
	"three fields":    "x 1 2 3\n",
}

// The exposition parser reads what the Prometheus library's own parser
// reads from the same page, sample for sample, on kube-proxy's real pages
// (written by the oracle through kube-proxy's registry and handler) and on
// the format's corners. expfmt runs in test/kubeproxy's module, which links
// it through Kubernetes, so the product's module never does.
func TestExpositionAgreesWithExpfmt(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, real := range []string{realIptablesPage, realNftablesPage} {
		abs, err := filepath.Abs(real)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, abs)
	}
	write := func(kind string, pages map[string]string) {
		for name, page := range pages {
			f := filepath.Join(dir, kind+"-"+strings.ReplaceAll(name, " ", "-")+".prom")
			if err := os.WriteFile(f, []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	write("agreed", agreedPages)
	write("refused", refusedPages)
	theirs := expfmtRead(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			want, ok := theirs[f]
			if !ok {
				t.Fatalf("expfmtdiff printed nothing for %s", f)
			}
			got, err := ParseExposition(readPage(t, f), func(string) bool { return true })
			refused := strings.HasPrefix(filepath.Base(f), "refused-")
			switch {
			case refused && (err == nil || want.Error == ""):
				t.Fatalf("a page that breaks the format: ours %v, expfmt %q; want both to refuse it", err, want.Error)
			case refused:
				return
			case want.Error != "" || err != nil:
				t.Fatalf("ours %v, expfmt %q; want both to read it", err, want.Error)
			}
			sameSamples(t, got, want)
		})
	}
}

// sameSamples fails t unless ours are exactly the samples expfmt read (and
// there are some); it returns how many.
func sameSamples(t *testing.T, got []Sample, want expfmtPage) int {
	t.Helper()
	ours := spellSamples(t, got)
	them := make([]string, 0, len(want.Samples))
	for _, s := range want.Samples {
		them = append(them, sampleKey(s.Name, s.Labels, s.Value))
	}
	sort.Strings(them)
	if strings.Join(ours, "\n") != strings.Join(them, "\n") || len(ours) == 0 {
		t.Errorf("%s: samples differ from expfmt's:\n%s", filepath.Base(want.File), diffLines(ours, them))
	}
	return len(ours)
}

// expfmtRead runs test/kubeproxy/expfmtdiff with the newest minor's mod
// file, as internal/oracle builds the oracle (the same module cache and
// build cache serve both), and returns its reading of each file.
func expfmtRead(t *testing.T, files []string) map[string]expfmtPage {
	t.Helper()
	src, err := filepath.Abs("../../test/kubeproxy")
	if err != nil {
		t.Fatal(err)
	}
	newest := oracle.Minors[len(oracle.Minors)-1]
	cmd := exec.Command("go", append([]string{"run", "-modfile=go." + newest + ".mod", "./expfmtdiff"}, files...)...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), oracle.BuildEnv(newest)...) // its toolchain too
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./expfmtdiff in %s: %v\n%s", src, err, stderr.Bytes())
	}
	pages := map[string]expfmtPage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var p expfmtPage
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("expfmtdiff printed %q: %v", clip(sc.Text(), 200), err)
		}
		pages[p.File] = p
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return pages
}

// spellSamples writes our samples as expfmtdiff does: le and quantile
// bounds and values in Go's shortest form, so "1e-3" and "0.001" agree.
func spellSamples(t *testing.T, samples []Sample) []string {
	t.Helper()
	var out []string
	for _, s := range samples {
		labels := map[string]string{}
		for k, v := range s.Labels {
			if k == "le" || k == "quantile" {
				f, err := parseExpositionFloat(v)
				if err != nil {
					t.Fatalf("%s %s=%q: %v", s.Name, k, v, err)
				}
				v = spell(f)
			}
			labels[k] = v
		}
		out = append(out, sampleKey(s.Name, labels, spell(s.Value)))
	}
	sort.Strings(out)
	return out
}

// spell is Go's shortest 'g' form, which spells the special values as
// the exposition format does (+Inf, -Inf, NaN); expfmtdiff spells its
// values the same way.
func spell(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func sampleKey(name string, labels map[string]string, value string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name + "{")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q,", k, labels[k])
	}
	b.WriteString("} " + value)
	return b.String()
}

// diffLines lists the lines only one side has, at most 20.
func diffLines(ours, theirs []string) string {
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, s := range l {
			m[s] = true
		}
		return m
	}
	o, th := in(ours), in(theirs)
	var out []string
	for _, s := range ours {
		if !th[s] {
			out = append(out, "only ours:   "+s)
		}
	}
	for _, s := range theirs {
		if !o[s] {
			out = append(out, "only expfmt: "+s)
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... and %d more", len(out)-20))
	}
	return fmt.Sprintf("%d ours, %d expfmt's\n%s", len(ours), len(theirs), strings.Join(out, "\n"))
}

// Every minor's kube-proxy writes a page both parsers read alike: the
// oracle of each minor syncs a few dual-stack Services in nftables mode in
// a fresh network namespace and writes its real /metrics page (kube-proxy's
// registry through kube-proxy's handler, test/kubeproxy/metricsdump.go).
func TestExpositionAgreesWithExpfmtOnEveryMinor(t *testing.T) {
	if !nstest.InNetns(t) {
		return
	}
	nstest.Tool(t, "nft")
	dir := t.TempDir()
	var files []string
	for _, minor := range oracle.Minors {
		page := filepath.Join(dir, "kube-proxy-"+minor+"-nftables-metrics.prom")
		args := append(oracle.Args(backend.NFTables, oracle.Options{Services: 5, IPv6: true}), "--metrics-out", page)
		if out, err := exec.Command(oracle.Binary(t, minor), args...).CombinedOutput(); err != nil {
			t.Fatalf("oracle %s %s: %v\n%s", minor, strings.Join(args, " "), err, out)
		}
		files = append(files, page)
	}
	theirs := expfmtRead(t, files)
	for _, f := range files {
		want := theirs[f]
		got, err := ParseExposition(readPage(t, f), func(string) bool { return true })
		if err != nil || want.Error != "" {
			t.Fatalf("%s: ours %v, expfmt %q; want both to read kube-proxy's page", filepath.Base(f), err, want.Error)
		}
		n := sameSamples(t, got, want)
		if _, _, err := ParseFigures(readPage(t, f)); err != nil {
			t.Errorf("%s: kube-proxy's own page gives no figures: %v", filepath.Base(f), err)
		}
		t.Logf("%s: %d samples, read alike", filepath.Base(f), n)
	}
}
