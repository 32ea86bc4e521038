# gpusched — build, test and benchmark. Everything the targets need is
# installed by the targets themselves (only Go itself must be present).
GO      ?= go
BIN     := bin/gpusched
SHARED  ?= ../shared
PHILLY  := $(SHARED)/traces/philly/philly.csv
FUZZTIME ?= 10s

.PHONY: all build test vet fmt-check bench bench-core bench-philly fuzz experiments clean chromium vendor-web bench-eta

all: build

build:
	$(GO) build -o $(BIN) ./cmd/gpusched

## test: the whole suite — formatting, vet, unit, scenario, determinism,
## fuzz-corpus, end-to-end and browser tests (the README's and CI's command).
test: fmt-check vet chromium
	$(GO) test -count=1 ./...

## chromium: the headless browser of the browser tests (Debian's chromium,
## driven by chromedp), installed as root when missing. Without root or
## apt-get the browser tests skip, saying why.
chromium:
	@if command -v chromium >/dev/null 2>&1 || [ -n "$$GPUSCHED_CHROMIUM" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "chromium is not installed and cannot be (not root, or no apt-get): the browser tests will skip"; exit 0; fi; \
	echo "installing Debian's chromium for the browser tests"; \
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null) || \
	  echo "could not install chromium: the browser tests will skip"

## vendor-web: fetch the dashboard's and the report's chart library (uPlot)
## from npm into internal/web/uplot (committed; only to update it).
vendor-web:
	./scripts/vendor-web.sh

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## bench: every Go benchmark plus the Philly replay (docs/BENCHMARKS.md).
bench: bench-core bench-philly

bench-core:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## bench-eta: `gpusched jobs --eta` with 1,000 queued jobs on 1,000 GPUs,
## and one forecast of that state (docs/BENCHMARKS.md).
bench-eta:
	$(GO) test -run '^$$' -bench 'JobsETA' -benchtime 5x ./service/server/
	$(GO) test -run '^$$' -bench 'Run$$' -benchtime 5x ./service/forecast/

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
