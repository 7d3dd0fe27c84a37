# One place for the version: VERSION is stamped into the binary and packages.
VERSION := $(shell cat VERSION)
PKG     := github.com/rke2-proxy-backend/rke2-proxy-backend
LDFLAGS := -s -w -X $(PKG)/internal/version.Version=$(VERSION)
GO      ?= go
export PATH := $(PATH):/usr/local/go/bin

.PHONY: all build test lint unit e2e packages bench clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/rke2-proxy-backend ./cmd/rke2-proxy-backend

# The whole suite: formatting, vet, unit/golden/netns tests, then the
# end-to-end checks (packages, real systemd boot) which skip when not root.
test: lint unit e2e

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

unit:
	$(GO) test -count=1 ./...

e2e:
	@for t in $(sort $(wildcard packaging/test/*.sh)); do echo "== $$t"; bash $$t || exit 1; done

bench:
	@for b in $(sort $(wildcard bench/*.sh)); do echo "== $$b"; bash $$b || exit 1; done

clean:
	rm -rf bin dist
