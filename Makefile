# gpusched — build, test and benchmark. Everything the targets need is
# installed by the targets themselves (only Go itself must be present).
GO      ?= go
BIN     := bin/gpusched
SHARED  ?= ../shared
PHILLY  := $(SHARED)/traces/philly/philly.csv
FUZZTIME ?= 10s
# The Kubernetes test bed (scripts/testbed, docs/KUBERNETES.md).
TESTBED_DIR   ?= out/testbed
TESTBED_FLAGS ?=
TESTBED       := TESTBED_SHARED=$(abspath $(SHARED)) scripts/testbed
VOLCANO_SRC   := $(SHARED)/testbed/volcano-src.tar.gz
VOLCANO_FLAG  := $(if $(wildcard $(VOLCANO_SRC)),--volcano,)

.PHONY: all build test vet fmt-check bench bench-core bench-philly fuzz experiments fidelity clean \
	testbed testbed-down testbed-build bench-testbed bench-testbed-cold \
	chromium vendor-web bench-eta bench-kube bench-kube-bundle bench-volcano \
	etcd test-ha test-python torch gpucheck

all: build

build:
	$(GO) build -o $(BIN) ./cmd/gpusched

## test: the whole suite — formatting, vet, unit, scenario, determinism,
## fuzz-corpus, end-to-end and browser tests (the README's and CI's command). The
## Kubernetes bed's binaries are built first (once per machine: minutes),
## outside the tests' time limit.
test: fmt-check vet testbed-build chromium etcd torch
	TESTBED_SHARED=$(abspath $(SHARED)) $(GO) test -count=1 ./...
	$(MAKE) --no-print-directory test-python

## gpucheck: the checks that need a real NVIDIA GPU (scripts/gpucheck: NVML
## discovery and power, the PyTorch example on CUDA with NCCL, device
## confinement with the driver). Not part of test: run it as root on a machine
## with the NVIDIA driver and a CUDA build of PyTorch; results in out/gpucheck.
gpucheck:
	CGO_ENABLED=1 $(GO) build -o $(BIN) ./cmd/gpusched
	GPUSCHED=$(BIN) scripts/gpucheck out/gpucheck

## testbed: start the Kubernetes test bed in TESTBED_DIR (then
## `. $(TESTBED_DIR)/env; kubectl get nodes`); TESTBED_FLAGS=--volcano adds
## Volcano's job controller, --volcano-scheduler also vc-scheduler.
testbed:
	$(TESTBED) up $(TESTBED_DIR) $(TESTBED_FLAGS)

## testbed-down: stop the bed in TESTBED_DIR.
testbed-down:
	$(TESTBED) down $(TESTBED_DIR)

## testbed-build: build the bed's binaries into the cache (or find them
## there); Volcano's too when its source is in $(SHARED), and the JobSet and
## Kueue controllers (kube's TestJobSet and TestKueue).
testbed-build:
	$(TESTBED) build $(VOLCANO_FLAG) --jobset --kueue

## bench-testbed: wall time of `scripts/testbed up` with a warm cache (and
## with --volcano when its source is there) and of `down`, three times each.
bench-testbed: testbed-build
	@bash -c 'set -e; d=$$(mktemp -d); trap "$(TESTBED) down $$d/bed >/dev/null 2>&1; rm -rf $$d" EXIT; \
	TIMEFORMAT="%R s"; for f in "" $(VOLCANO_FLAG); do for i in 1 2 3; do \
	  printf "up %s: " "$$f"; { time $(TESTBED) up $$d/bed $$f 2>/dev/null; } 2>&1; \
	  printf "down: "; { time $(TESTBED) down $$d/bed; } 2>&1; done; done'

## bench-testbed-cold: the bed's cold build, as on a fresh machine: fresh Go
## build and module caches and bed cache in a temporary directory, removed
## afterwards (tens of minutes; downloads about 1 GB of modules).
bench-testbed-cold:
	@bash -c 'set -e; d=$$(mktemp -d); trap "GOMODCACHE=$$d/mod $(GO) clean -modcache; rm -rf $$d" EXIT; \
	TIMEFORMAT="cold build $(VOLCANO_FLAG): %R s wall, %U s user, %S s sys"; \
	time GOCACHE=$$d/gocache GOMODCACHE=$$d/mod TESTBED_CACHE=$$d/testbed $(TESTBED) build $(VOLCANO_FLAG)'

## bench-kube: `gpusched kube` on the test bed (docs/BENCHMARKS.md): 1,000
## kwok nodes of 8 GPUs, 10,000 single-pod jobs and 500 gangs of 8 created
## at once (mode e2e), then the same pods created before gpusched starts
## (mode backlog); a bed of its own for each. Minutes; not in make test.
bench-kube: build testbed-build
	TESTBED_SHARED=$(abspath $(SHARED)) $(GO) run ./scripts/kubebench -bin $(BIN) -mode e2e
	TESTBED_SHARED=$(abspath $(SHARED)) $(GO) run ./scripts/kubebench -bin $(BIN) -mode backlog

## bench-kube-bundle: the same benchmark packed for a machine without Go or
## network (out/kubebench-bundle.tar.xz, about 100 MB; there: tar xJf it and
## run kubebench-bundle/run; scripts/kubebench/bundle says more).
bench-kube-bundle:
	scripts/kubebench/bundle out/kubebench-bundle.tar.xz

## bench-volcano: `gpusched kube` beside Volcano's vc-scheduler on one bed
## (scripts/testbed up --volcano-scheduler; docs/BENCHMARKS.md): 200 Volcano
## Jobs of 4 pods (minAvailable 4, 1 GPU each) on 100 kwok nodes of 8 GPUs,
## created at once, for each scheduler in turn, the order alternating over
## 3 repetitions; both schedulers, and vc-controller-manager (which creates
## the pods for both), with their default API rate limits. First with both
## schedulers running throughout, then with the other one stopped during
## each turn (-pause-other). Needs Volcano's source in $(SHARED). About 10
## minutes; not in make test.
VCBENCH := TESTBED_SHARED=$(abspath $(SHARED)) $(GO) run ./scripts/kubebench -bin $(BIN) -volcano \
	-nodes 100 -gpus 8 -jobs 200 -job-size 4 -reps 3 -schedulers gpusched,volcano -args=
bench-volcano: build
	$(TESTBED) build --volcano-scheduler
	$(VCBENCH)
	$(VCBENCH) -pause-other

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

## torch: Debian's PyTorch (python3-torch 1.13, CPU: torch.distributed with
## gloo, torchrun), which the e2e tests of real training under the service
## run (e2e/torch_test.go, examples/pytorch). Installed as root when no
## python3 imports torch; without it those tests skip, saying so.
torch:
	@for py in /usr/bin/python3 python3; do $$py -c 'import torch' >/dev/null 2>&1 && exit 0; done; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then \
	  echo "warning: PyTorch is missing and cannot be installed here (needs root and apt-get): the PyTorch tests will skip"; exit 0; fi; \
	echo "installing Debian's python3-torch for the PyTorch tests"; \
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-torch >/dev/null) || \
	  echo "warning: could not install python3-torch: the PyTorch tests will skip"

## vendor-web: fetch the dashboard's and the report's chart library (uPlot)
## from npm into internal/assets/web/uplot (committed; only to update it).
vendor-web:
	./scripts/vendor-web.sh

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

## bench-eta: `gpusched jobs --eta` with 1,000 queued jobs on 1,000 GPUs,
## and one forecast of that state (docs/BENCHMARKS.md).
bench-eta:
	$(GO) test -run '^$$' -bench 'JobsETA' -benchtime 5x ./service/server/
	$(GO) test -run '^$$' -bench 'Run$$' -benchtime 5x ./service/forecast/

## bench-philly: wall time and peak memory of the full Philly replay
## (needs ../shared beside the checkout): fifo on 2,500 V100s, then the
## recommended policy (gittins with the hetero placer, recipe.Recommended)
## on v100=800,p100=800,k80=800.
bench-philly: build
	@if [ ! -f $(PHILLY) ]; then echo "skip: $(PHILLY) not found"; exit 0; fi; \
	for i in 1 2 3; do \
	  /usr/bin/time -f 'philly fifo: %e s wall, %M KiB peak RSS' \
	    $(BIN) sim --trace $(PHILLY) --gpus v100=2500 --gpus-per-node 8 --policy fifo --json; \
	done; \
	for i in 1 2 3; do \
	  /usr/bin/time -f 'philly gittins+hetero: %e s wall, %U s user, %M KiB peak RSS' \
	    $(BIN) sim --trace $(PHILLY) --gpus v100=800,p100=800,k80=800 --gpus-per-node 8 \
	      --policy gittins --placer hetero --json; \
	done

## experiments: the policy comparison tables of docs/EXPERIMENTS.md, with
## issue 28's robustness grid (minutes; not in make test).
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
