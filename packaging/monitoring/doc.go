// Package monitoring holds no code: its tests check the shipped
// node-problem-detector, Prometheus and Grafana files against the tools
// that read them (node-problem-detector's config structs, promtool), the
// generated ones against their generator (dashboardgen, a module of its
// own so the product never links grafana-foundation-sdk), and every query
// against the series a real textfile and a real kube-proxy page export.
package monitoring
