module github.com/rke2-proxy-backend/rke2-proxy-backend/packaging/monitoring/dashboardgen

go 1.26.8

require (
	github.com/grafana/grafana-foundation-sdk/go v0.0.22
	go.yaml.in/yaml/v3 v3.0.4
)
