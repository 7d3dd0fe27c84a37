// Package monitoring holds no code: its tests check the shipped
// node-problem-detector and Prometheus files against the tools that read
// them (node-problem-detector's config structs, promtool).
package monitoring
