// This go.mod only marks test/kubeproxy as its own module, so the product's
// module (the repository root) never builds or links Kubernetes. The oracle
// is built once per Kubernetes minor with that minor's mod file:
//   go build -modfile=go.v1.36.mod -o kubeproxy-oracle .
// (internal/testkit/oracle does this, with the build tags of the minor's API era).
module github.com/rke2-proxy-backend/rke2-proxy-backend/test/kubeproxy

go 1.26.0
