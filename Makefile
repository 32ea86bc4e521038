# gpusched — build, test and benchmark. Everything the targets need is
# installed by the targets themselves (only Go itself must be present).
GO      ?= go
BIN     := bin/gpusched
SHARED  ?= ../shared
PHILLY  := $(SHARED)/traces/philly/philly.csv
FUZZTIME ?= 10s

.PHONY: all build test vet fmt-check bench bench-core bench-philly fuzz experiments fidelity clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/gpusched

## test: the whole suite — formatting, vet, unit, scenario, determinism,
## fuzz-corpus and end-to-end tests (the README's and CI's command).
test: fmt-check vet
	$(GO) test -count=1 ./...

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

## fidelity: gpusched in Gavel-compatible mode against Gavel's own simulator
## (docs/FIDELITY.md); uses ../shared/peers/gavel when present (slow the
## first time, cached under out/fidelity/), else Gavel's recorded figures.
## Not part of `make test`.
fidelity: build
	$(GO) run ./scripts/fidelity -bin $(BIN) -shared $(SHARED)

## fuzz: run every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin
