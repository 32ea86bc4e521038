# gpusched — build, test and benchmark. Everything the targets need is
# installed by the targets themselves (only Go itself must be present).
GO      ?= go
BIN     := bin/gpusched
SHARED  ?= ../shared
PHILLY  := $(SHARED)/traces/philly/philly.csv
FUZZTIME ?= 10s

.PHONY: all build test vet fmt-check bench bench-core bench-philly fuzz experiments clean etcd test-ha test-python

all: build

build:
	$(GO) build -o $(BIN) ./cmd/gpusched

## test: the whole suite — formatting, vet, unit, scenario, determinism,
## fuzz-corpus and end-to-end tests (the README's and CI's command).
test: fmt-check vet etcd
	$(GO) test -count=1 ./...
	$(MAKE) --no-print-directory test-python

## test-python: the stdlib-only Python client of the EDL primitives
## (clients/python), against the real binary.
test-python: build
	@command -v python3 >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 >/dev/null; } || \
	  { echo "python3 is missing and cannot be installed here: skipping clients/python"; exit 0; }; \
	GPUSCHED_BIN=$(CURDIR)/$(BIN) python3 -m unittest discover -s clients/python -p 'test_*.py' -v

## test-ha: the failover test with the leader killed 20 times (make test
## kills it 3 times), 3 etcd members, 3 servers, 2 agents, 8 CLI clients.
test-ha: etcd
	$(GO) test -count=1 -v -run 'TestHAFailover$$' ./e2e -ha.kills 20 -timeout 20m

## etcd: Debian's etcd-server, which the tests of the etcd store and of
## several servers start (a single member, a 3-member cluster on loopback).
## Installed as root when missing; without it those tests skip, saying so.
etcd:
	@if command -v etcd >/dev/null 2>&1 || [ -x /usr/bin/etcd ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing etcd-server (Debian)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null \
	    || echo "warning: could not install etcd-server; the etcd tests will skip"; \
	else echo "warning: etcd-server is missing and cannot be installed here (needs root and apt-get); the etcd tests will skip"; fi

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## bench: every Go benchmark plus the Philly replay (docs/BENCHMARKS.md).
bench: bench-core bench-philly

bench-core:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-philly: wall time and peak memory of the full Philly replay
## (needs ../shared beside the checkout).
bench-philly: build
	@if [ ! -f $(PHILLY) ]; then echo "skip: $(PHILLY) not found"; exit 0; fi; \
	for i in 1 2 3; do \
	  /usr/bin/time -f 'philly fifo: %e s wall, %M KiB peak RSS' \
	    $(BIN) sim --trace $(PHILLY) --gpus v100=2500 --gpus-per-node 8 --policy fifo --json; \
	done

## experiments: the policy comparison tables of docs/EXPERIMENTS.md.
experiments: build
	$(GO) run ./scripts/experiments -bin $(BIN) -shared $(SHARED)

## fuzz: run every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin
