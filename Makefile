# citefind — see README.md. Two commands set everything up:
#   make demo   build, index the shipped sample corpus, run two example queries
#   make test   all tests
SHELL    := /bin/bash
GO       ?= go
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X 'main.Version=$(VERSION)'
BIN      := bin/citefind
DEMO_DB  := .cache/demo-db
CITEFIND_DATA ?= ../shared/data
ACMCR    := $(CITEFIND_DATA)/acm-cr
EVAL_DB  := .cache/bench/acm-cr
PY_XAPIAN := /usr/bin/python3

.PHONY: build demo demo-acm test test-short race bench eval bench-xapian bench-index bench-compare sweep lint fmt clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/citefind

demo: build
	$(BIN) index --db $(DEMO_DB) sample/papers.bib
	@echo
	@echo '== query 1: a masked-citation sentence'
	$(BIN) query --db $(DEMO_DB) -k 3 "We merge the BM25 and dense rankings with reciprocal rank fusion [CITATION], which needs no score calibration."
	@echo
	@echo '== query 2: a sentence with a numeric marker, as JSON'
	$(BIN) query --db $(DEMO_DB) -k 3 --json "Dense passage retrieval [12] encodes questions and passages with two BERT encoders for open-domain question answering."

# Optional: the ACM-CR collection (113k records), when ../shared/data is present.
demo-acm: build
	@test -d $(ACMCR) || { echo "ACM-CR not found at $(ACMCR) (set CITEFIND_DATA)"; exit 1; }
	$(BIN) eval --bench acm-cr --db $(EVAL_DB)

# Unit tests with the race detector, then the tests over the real ACM-CR data
# (skipped with a message when ../shared/data is absent) without it.
test:
	$(GO) vet ./...
	$(GO) test -race -short -timeout 15m ./...
	$(GO) test -timeout 20m -run 'ACMCR|RealData' ./...

test-short:
	$(GO) test -short ./...

race:
	$(GO) test -race ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./...

# ACM-CR, both topic sets, with the shipped defaults; writes docs/eval/acm-cr.md.
eval: build
	@test -d $(ACMCR) || { echo "ACM-CR not found at $(ACMCR) (set CITEFIND_DATA)"; exit 1; }
	@mkdir -p docs/eval benchmarks/out
	$(BIN) eval --bench acm-cr --db $(EVAL_DB) --run-out benchmarks/out/citefind-bm25.run > benchmarks/out/eval.md
	{ echo "# ACM-CR evaluation"; echo; \
	  echo "Produced by \`make eval\` at commit $$(git rev-parse --short HEAD) on $$(date -u +%Y-%m-%d)."; echo; \
	  cat benchmarks/out/eval.md; } > docs/eval/acm-cr.md
	cat docs/eval/acm-cr.md

# Peer comparison: Xapian BM25 (Debian python3-xapian) and citefind on the same collection.
bench-xapian:
	bash benchmarks/setup-xapian.sh
	$(PY_XAPIAN) benchmarks/xapian_bm25.py --data $(ACMCR) --out benchmarks/out/xapian --json

# Whole-collection ingest + index wall time and peak RSS, and query latency.
bench-index: build
	bash benchmarks/index-bench.sh $(ACMCR)

# citefind and Xapian in one run, with ratios (docs/benchmarks.md).
bench-compare: build
	bash benchmarks/setup-xapian.sh
	$(PY_XAPIAN) benchmarks/compare.py --data $(ACMCR) | tee benchmarks/out/compare.md

lint:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin .cache
