# One place for the version: VERSION is stamped into the binary and packages.
VERSION := $(shell cat VERSION)
PKG     := github.com/rke2-proxy-backend/rke2-proxy-backend
LDFLAGS := -s -w -X $(PKG)/internal/version.Version=$(VERSION)
GO      ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: all build test lint oracle unit e2e vm packages tarball sysext release repo bench clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/rke2-proxy-backend ./cmd/rke2-proxy-backend
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/rke2-proxy-backend-generator ./cmd/rke2-proxy-backend-generator

# The whole suite: formatting, vet, unit/golden/netns tests, then the
# end-to-end checks (packages, real systemd boot) which skip when not root.
test: lint oracle unit e2e

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	@# The shipped binaries link no test kit: no package under internal/testkit
	@# (fixture hosts, the oracle, netns helpers, fakes, goldens) and not the
	@# standard library's testing, which every kit package imports.
	@kit=$$($(GO) list -deps ./cmd/... | grep -E '^testing$$|/testscript$$|/internal/testkit(/|$$)|/packaging/test/'); \
	  if [ -n "$$kit" ]; then echo "the binaries in cmd/ link test-only packages:"; echo "$$kit"; exit 1; fi

# kube-proxy's real proxiers, one build per Kubernetes minor (test/kubeproxy,
# its own Go module), cached in .cache/oracle/ and rebuilt only when their
# sources change. Built here, with no timeout, so that go test's 10-minute
# limit in `unit` never covers a cold Kubernetes build (minutes per minor).
# -v streams each build's progress lines (which build of how many, a beat
# every 30 s while it compiles: internal/testkit/oracle's runReported).
oracle:
	$(GO) test -count=1 -timeout 0 -v -run '^TestBinaries$$' ./internal/testkit/oracle

# Long steps say they are alive at least once a minute
# (packaging/test/lib/progress.sh), and e2e numbers its scripts and times each.
HEARTBEAT_SECONDS ?= 50
export HEARTBEAT_SECONDS
E2E_SCRIPTS ?= $(sort $(wildcard packaging/test/*.sh))

unit:
	@bash packaging/test/lib/progress.sh 'unit: go test ./...' $(GO) test -count=1 -timeout 30m ./...

e2e:
	@set -- $(E2E_SCRIPTS); i=0; for t; do i=$$((i+1)); \
	  bash packaging/test/lib/progress.sh "e2e [$$i/$$#] $$t" bash $$t || exit 1; done

# The real-kernel tier alone (also part of e2e): Debian's kernels under
# QEMU, amd64 and arm64. One case: make vm VM_CASES=nas-absent.
vm:
	bash packaging/test/vm.sh

# Packages: .deb and .rpm for each architecture in dist/, from
# packaging/nfpm.yaml. nfpm is pinned and installed into .cache/ from the Go
# module proxy on first use. SOURCE_DATE_EPOCH (the last commit's time) makes
# man pages and package timestamps reproducible.
NFPM_VERSION      := v2.45.2
NFPM              := .cache/bin/nfpm-$(NFPM_VERSION)/nfpm
PKG_ARCHES        := amd64 arm64
PKG_FORMATS       := deb rpm
PKG_BUILD         := dist/build
PACKAGING_CONFIG  ?= packaging/config.yaml
# Must match maintainer: in packaging/nfpm.yaml (the Debian changelog's trailer).
PKG_MAINTAINER    := rke2-proxy-backend maintainers <maintainers@rke2-proxy-backend.invalid>
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || date +%s)

packages: $(NFPM)
	@test -f $(PACKAGING_CONFIG) || { echo "packages: $(PACKAGING_CONFIG) (the operator config example shipped as /usr/share/rke2-proxy-backend/config.yaml.example, from which the package creates /etc/rke2-proxy-backend/config.yaml when there is none) is missing" >&2; exit 1; }
	rm -rf dist
	mkdir -p $(PKG_BUILD)/docs $(PKG_BUILD)/doc
	for a in $(PKG_ARCHES) host; do \
	  goarch=$$a; [ $$a = host ] && goarch=$$($(GO) env GOARCH); \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$goarch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
	    -o $(PKG_BUILD)/$$a/rke2-proxy-backend ./cmd/rke2-proxy-backend && \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$goarch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
	    -o $(PKG_BUILD)/$$a/rke2-proxy-backend-generator ./cmd/rke2-proxy-backend-generator && \
	  CGO_ENABLED=0 GOOS=linux GOARCH=$$goarch $(GO) build -trimpath -ldflags '$(LDFLAGS)' \
	    -o $(PKG_BUILD)/$$a/kubectl-proxy_backend ./cmd/kubectl-proxy_backend || exit 1; \
	done
	env -u RKE2_PROXY_BACKEND_ROOT SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
	  $(GO) run -trimpath -ldflags '$(LDFLAGS)' ./cmd/rke2-proxy-backend-docs --dir $(PKG_BUILD)/docs
	gzip -9n $(PKG_BUILD)/docs/man1/*.1 $(PKG_BUILD)/docs/man5/*.5
	gzip -9nc CHANGELOG.md > $(PKG_BUILD)/doc/changelog.gz
	{ printf 'rke2-proxy-backend (%s-1) unstable; urgency=medium\n\n' '$(VERSION)'; \
	  printf '  * Upstream release %s; see changelog.gz for the changes.\n\n' '$(VERSION)'; \
	  printf ' -- %s  %s\n' '$(PKG_MAINTAINER)' "$$(date -u -R -d @$(SOURCE_DATE_EPOCH))"; \
	} | gzip -9n > $(PKG_BUILD)/doc/changelog.Debian.gz
	for a in $(PKG_ARCHES); do for f in $(PKG_FORMATS); do \
	  ARCH=$$a VERSION=$(VERSION) BUILD=$(PKG_BUILD) CONFIG=$(PACKAGING_CONFIG) SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) \
	    $(NFPM) package --config packaging/nfpm.yaml --packager $$f --target dist/ || exit 1; \
	done; done
	touch dist/.stamp
	@ls -1 dist/*.deb dist/*.rpm

# Release tarballs for hosts without dpkg or rpm (packaging/tarball/install.sh
# says what goes where): dist/rke2-proxy-backend-$(VERSION)-linux-ARCH.tar.gz
# and its .sha256 (sha256sum -c format), from what `make packages` staged in
# dist/build (run first when dist/ has no packages). Reproducible: every
# entry sorted, owned by 0:0 numerically, dated SOURCE_DATE_EPOCH, gzip
# without a name or time.
TARBALL_STAGE := dist/tarball

tarball:
	@test -f dist/.stamp || $(MAKE) packages
	rm -rf $(TARBALL_STAGE) dist/rke2-proxy-backend-*.tar.gz dist/rke2-proxy-backend-*.tar.gz.sha256
	for a in $(PKG_ARCHES); do \
	  n=rke2-proxy-backend-$(VERSION)-linux-$$a; d=$(TARBALL_STAGE)/$$n; \
	  install -D -m 0755 packaging/tarball/install.sh $$d/install.sh && \
	  install -D -m 0755 $(PKG_BUILD)/$$a/rke2-proxy-backend $$d/bin/rke2-proxy-backend && \
	  install -D -m 0755 $(PKG_BUILD)/$$a/kubectl-proxy_backend $$d/bin/kubectl-proxy_backend && \
	  install -D -m 0755 $(PKG_BUILD)/$$a/rke2-proxy-backend-generator $$d/libexec/rke2-proxy-backend-generator && \
	  install -D -m 0755 packaging/tarball/uninstall.sh $$d/bin/rke2-proxy-backend-uninstall.sh && \
	  install -D -m 0644 -t $$d/lib/systemd/system units/*.service && \
	  install -D -m 0644 -t $$d/share/man/man1 $(PKG_BUILD)/docs/man1/*.1.gz && \
	  install -D -m 0644 -t $$d/share/man/man5 $(PKG_BUILD)/docs/man5/*.5.gz && \
	  install -D -m 0644 $(PKG_BUILD)/docs/completions/rke2-proxy-backend.bash $$d/share/bash-completion/completions/rke2-proxy-backend && \
	  install -D -m 0644 $(PKG_BUILD)/docs/completions/_rke2-proxy-backend $$d/share/zsh/site-functions/_rke2-proxy-backend && \
	  install -D -m 0644 $(PKG_BUILD)/docs/completions/rke2-proxy-backend.fish $$d/share/fish/vendor_completions.d/rke2-proxy-backend.fish && \
	  install -D -m 0644 $(PKG_BUILD)/doc/changelog.gz $$d/share/doc/rke2-proxy-backend/changelog.gz && \
	  install -D -m 0644 LICENSE $$d/share/doc/rke2-proxy-backend/LICENSE && \
	  install -D -m 0644 $(PACKAGING_CONFIG) $$d/share/doc/rke2-proxy-backend/config.yaml.example && \
	  install -D -m 0644 packaging/monitoring/node-problem-detector/rke2-proxy-backend.json $$d/share/rke2-proxy-backend/monitoring/node-problem-detector/rke2-proxy-backend.json && \
	  install -D -m 0644 packaging/monitoring/prometheus/rke2-proxy-backend.rules.yaml $$d/share/rke2-proxy-backend/monitoring/prometheus/rke2-proxy-backend.rules.yaml && \
	  install -D -m 0644 packaging/monitoring/prometheus/rke2-proxy-backend.prometheusrule.yaml $$d/share/rke2-proxy-backend/monitoring/prometheus/rke2-proxy-backend.prometheusrule.yaml && \
	  install -D -m 0644 packaging/monitoring/grafana/rke2-proxy-backend-fleet.json $$d/share/rke2-proxy-backend/monitoring/grafana/rke2-proxy-backend-fleet.json && \
	  tar -C $(TARBALL_STAGE) --sort=name --owner=0 --group=0 --numeric-owner --mode=u+rwX,go+rX,go-w \
	    --mtime=@$(SOURCE_DATE_EPOCH) --format=gnu -cf - $$n | gzip -9n > dist/$$n.tar.gz && \
	  (cd dist && sha256sum $$n.tar.gz > $$n.tar.gz.sha256) || exit 1; \
	done
	@ls -1 dist/*.tar.gz

# System extensions (systemd-sysext) for immutable node images:
# dist/rke2-proxy-backend-$(VERSION)-ARCH.raw, ARCH as systemd names it
# (x86-64, arm64), squashfs with usr/ only, from what `make packages`
# staged in dist/build (packaging/sysext/build.sh says what goes in and
# why ID=_any). /etc comes from Ignition or cloud-init:
# packaging/sysext/butane.yaml, packaging/cloud-init/sysext/.
sysext:
	@test -f dist/.stamp || $(MAKE) packages
	rm -f dist/rke2-proxy-backend-*.raw
	for a in $(PKG_ARCHES); do \
	  case $$a in amd64) s=x86-64 ;; *) s=$$a ;; esac; \
	  SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) CONFIG=$(PACKAGING_CONFIG) \
	    packaging/sysext/build.sh $$a $(VERSION) $(PKG_BUILD) dist/rke2-proxy-backend-$(VERSION)-$$s.raw || exit 1; \
	done
	@ls -1 dist/*.raw

# A release: every artifact (.deb, .rpm, tarball, system extension; amd64
# and arm64), each with its SBOM (ARTIFACT.cdx.json, CycloneDX from the Go
# build info, by cyclonedx-gomod pinned and installed into .cache/ like
# nfpm), SHA256SUMS and its detached signature SHA256SUMS.asc by the key
# `make repo` signs with (REPO_GPG_KEY_ID, GNUPGHOME; a throwaway one for
# tests: eval "$$(packaging/repo/test-key.sh)"), in $(RELEASE_DIR)/. It
# refuses (packaging/release/preflight.sh) a VERSION that is no semantic
# version, a CHANGELOG.md without a "## VERSION - YYYY-MM-DD" section, a
# tree that is not clean, and a missing key. Built again from the same
# commit, every file but the signature is byte-identical
# (packaging/test/release.sh).
CDX_VERSION := v1.10.0
CDX         := .cache/bin/cyclonedx-gomod-$(CDX_VERSION)/cyclonedx-gomod
RELEASE_DIR := dist/release

release: $(NFPM) $(CDX)
	packaging/release/preflight.sh $(VERSION) CHANGELOG.md
	$(MAKE) packages
	$(MAKE) tarball sysext
	packaging/release/build.sh $(VERSION) dist $(RELEASE_DIR) $(CDX)

$(CDX):
	GOBIN=$(abspath $(dir $(CDX))) $(GO) install github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod@$(CDX_VERSION)

# Repositories: a signed APT repository and signed YUM/DNF repositories
# (x86_64, aarch64) from dist/ into $(REPO_DIR)/, signed with the builder's
# key: REPO_GPG_KEY_ID (fingerprint) in the keyring at GNUPGHOME, and
# REPO_GPG_PASSPHRASE_FILE if it has a passphrase. REPO_URL (where
# $(REPO_DIR)/ will be published) goes into the .list and .repo files. A
# throwaway key for tests: eval "$$(packaging/repo/test-key.sh)".
REPO_DIR ?= repo

repo:
	packaging/repo/build.sh dist $(REPO_DIR)

$(NFPM):
	GOBIN=$(abspath $(dir $(NFPM))) $(GO) install github.com/goreleaser/nfpm/v2/cmd/nfpm@$(NFPM_VERSION)

bench:
	@for b in $(sort $(wildcard bench/*.sh)); do echo "== $$b"; bash $$b || exit 1; done

clean:
	rm -rf bin dist
