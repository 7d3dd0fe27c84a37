// Command expfmtdiff parses Prometheus text expositions with the Prometheus
// library's own parser (expfmt, which this module links through
// k8s.io/component-base) and prints every sample it read, one JSON line per
// page, so a test in the product's module can compare them with what
// internal/kubeproxy's parser reads from the same page. It lives in a
// subdirectory so it is not part of the oracle binary (internal/oracle
// hashes only test/kubeproxy/*.go) and the product never links expfmt.
//
//	go run -modfile=go.v1.37.mod ./expfmtdiff PAGE...
//
// It needs expfmt.NewTextParser (prometheus/common v0.66 and later, so the
// mod files of 1.35 on); internal/kubeproxy's test runs it with the newest.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sample is one flattened series: the name as written on the page
// (histograms and summaries with their _bucket, _sum and _count suffixes),
// its labels, and its value spelled by strconv's 'g' format (JSON has no
// NaN or Inf).
type sample struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels"`
	Value  string            `json:"value"`
}

type page struct {
	File    string   `json:"file"`
	Error   string   `json:"error,omitempty"`
	Samples []sample `json:"samples"`
}

func main() {
	enc := json.NewEncoder(os.Stdout)
	for _, file := range os.Args[1:] {
		p := page{File: file}
		if err := read(file, &p); err != nil {
			p.Error = err.Error()
		}
		if err := enc.Encode(p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func read(file string, p *page) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(f)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, m := range families[n].GetMetric() {
			p.Samples = append(p.Samples, flatten(n, families[n].GetType(), m)...)
		}
	}
	return nil
}

// flatten turns one metric back into the lines it was written as.
func flatten(name string, typ dto.MetricType, m *dto.Metric) []sample {
	labels := func(extra ...string) map[string]string {
		l := map[string]string{}
		for _, lp := range m.GetLabel() {
			l[lp.GetName()] = lp.GetValue()
		}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	one := func(n string, v float64, extra ...string) sample {
		return sample{Name: n, Labels: labels(extra...), Value: spell(v)}
	}
	switch typ {
	case dto.MetricType_COUNTER:
		return []sample{one(name, m.GetCounter().GetValue())}
	case dto.MetricType_GAUGE:
		return []sample{one(name, m.GetGauge().GetValue())}
	case dto.MetricType_UNTYPED:
		return []sample{one(name, m.GetUntyped().GetValue())}
	case dto.MetricType_HISTOGRAM:
		h := m.GetHistogram()
		var out []sample
		// expfmt keeps a histogram's counts as integers unless one of them
		// has a fraction, and then all as floats (normalizeHistogram).
		for _, b := range h.GetBucket() {
			c := float64(b.GetCumulativeCount())
			if b.CumulativeCountFloat != nil {
				c = b.GetCumulativeCountFloat()
			}
			out = append(out, one(name+"_bucket", c, "le", spell(b.GetUpperBound())))
		}
		count := float64(h.GetSampleCount())
		if h.SampleCountFloat != nil {
			count = h.GetSampleCountFloat()
		}
		return append(out, one(name+"_sum", h.GetSampleSum()), one(name+"_count", count))
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		var out []sample
		for _, q := range s.GetQuantile() {
			out = append(out, one(name, q.GetValue(), "quantile", spell(q.GetQuantile())))
		}
		return append(out, one(name+"_sum", s.GetSampleSum()), one(name+"_count", float64(s.GetSampleCount())))
	}
	return nil
}

// spell writes a float as the test spells the values it reads: Go's
// shortest 'g' form, which spells the special values +Inf, -Inf and NaN
// as the exposition format does.
func spell(v float64) string {
	return strconv.FormatFloat(v, 'g', -1, 64)
}
