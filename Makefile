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

.PHONY: citeproc csl-suite cite-conformance build demo demo-acm test test-deps test-short race bench fuzz eval eval-suite train train-loco bench-xapian bench-index bench-bibtex bench-bibtex-texlive bench-compare bench-serve bench-hostile bench-cite-cold bench-weaviate bench-scale screenshots sweep lint fmt clean

# citeproc-js, the six default CSL styles and the en-US locale, pinned by
# version and sha256, fetched into cite/csl/dist/ (gitignored), which the
# binary embeds; done once, again when scripts/fetch-csl.sh changes.
CSL_DIST := cite/csl/dist/STAMP
citeproc: $(CSL_DIST)
$(CSL_DIST): scripts/fetch-csl.sh
	bash scripts/fetch-csl.sh

# The CSL processor test suite ($(CITEFIND_DATA)/csl-test-suite, 860 fixtures)
# through citeproc-js as its own runner drives it and through citefind's
# wrappers; writes the table and every failure to docs/cite-csl-suite.md.
# `make test` runs every 100th fixture under -race and all of them without.
csl-suite: citeproc
	CITEFIND_CSL_SUITE=all CSL_SUITE_REPORT=$(CURDIR)/docs/cite-csl-suite.md $(GO) test -run TestRealDataCSLSuite -timeout 60m -v ./cite/csl/ | grep -v '^=== RUN'

# citefind's engine vs pandoc's citeproc on 220 synthetic items in 12 styles
# (needs pandoc and Debian's styles: scripts/install-test-deps.sh); writes
# every difference, with its known cause, to cite/testdata/pandoc/report.txt.
# `make test` compares 20 items (5 under -race).
# Agreement with pandoc's citeproc: 220 synthetic items and 300 real ACM-CR
# records in 12 styles (about 8 minutes); writes cite/testdata/pandoc/report*.txt.
cite-conformance: citeproc test-deps
	CITEFIND_CONFORMANCE=all $(GO) test -run 'ConformancePandoc' -timeout 60m -v ./cite/ -args -update | grep -v '^=== RUN'

build: citeproc
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
# (skipped with a message when ../shared/data is absent), the kill -9 tests
# and the tests that skip under the race detector (one goroutine driving
# goja, pandoc, regular expressions or analysers, which it slows tenfold)
# without it, the slowest packages first (scripts/long-test-packages.sh).
# The Weaviate kill tests run last, alone: their 3-node cluster
# shares the 2 cores with nothing else (beside the other packages' long tests,
# CI saw TestClusterKill fail once, 2026-11-27, in a step its output cut off).
# test-deps installs what the tests need on a bare machine (pandoc and the CSL
# styles, for the citation-style conformance test, and chromium, for the
# browser test of the web page).
LONG_TESTS := 'ACMCR|RealData|Kill|Conformance|TrainSelf|TrainSeveral|KnownDiffs|MinimalStyleDifferences|LocaleCompareICU|CiteprocJSONIsParseXml|FastAnalyzeIsBleveEn|AstralCharacters|LanguageCaseMapping|ICUCaseMapping'
test: test-deps citeproc
	$(GO) vet ./...
	$(GO) test -race -short -timeout 15m ./...
	pkgs=$$(GO=$(GO) bash scripts/long-test-packages.sh) && $(GO) test -timeout 20m -run $(LONG_TESTS) $$pkgs
	$(GO) test -timeout 15m -run $(LONG_TESTS) ./retrieve/weaviate/

test-deps:
	bash scripts/install-test-deps.sh

test-short: citeproc
	$(GO) test -short ./...

race: citeproc
	$(GO) test -race ./...

bench: citeproc
	$(GO) test -run '^$$' -bench . -benchmem -timeout 30m ./...

# Each fuzz target for FUZZTIME (seed corpora in PKG/testdata/fuzz/TARGET/; new
# inputs are minimised for at most 10 s, during which no executions count;
# a crasher lands there too and then runs in every `go test` as a regression).
FUZZTIME ?= 60s
FUZZ_TARGETS := ./corpus:FuzzReadBibTeX ./corpus:FuzzReadJSONL ./retrieve:FuzzClean ./cite:FuzzParse
fuzz: citeproc
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
	  echo "== $$name ($$pkg, $(FUZZTIME))"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 10s $$pkg; done

# ACM-CR, both topic sets: BM25 with textbook settings (A) and with the shipped
# tuned defaults (B), every metric per set and stage, compared query by query
# (bootstrap CIs, randomisation test); writes docs/eval/acm-cr.md and its
# figures (docs/eval/acm-cr-*.png, .svg). Runs and TREC run files go to
# benchmarks/out.
EVAL_OUT := benchmarks/out
EVAL_TEXTBOOK := --bm25-k1 1.2 --bm25-b 0.75 --bm25-k3 0 --field-weights text=1
eval: build
	@test -d $(ACMCR) || { echo "ACM-CR not found at $(ACMCR) (set CITEFIND_DATA)"; exit 1; }
	@mkdir -p docs/eval $(EVAL_OUT)
	$(BIN) eval --bench acm-cr --db $(EVAL_DB) --data $(ACMCR) --quiet --retrievers bm25 --label textbook $(EVAL_TEXTBOOK) \
	  --save-run $(EVAL_OUT)/acm-cr-textbook.json > /dev/null
	$(BIN) eval --bench acm-cr --db $(EVAL_DB) --data $(ACMCR) --quiet --retrievers bm25 --label tuned \
	  --save-run $(EVAL_OUT)/acm-cr-tuned.json --run-out $(EVAL_OUT)/citefind-bm25.run > $(EVAL_OUT)/eval.md
	$(BIN) eval --compare $(EVAL_OUT)/acm-cr-textbook.json $(EVAL_OUT)/acm-cr-tuned.json \
	  --report docs/eval/acm-cr.md > /dev/null
	{ echo "# ACM-CR evaluation"; echo; \
	  echo "Produced by \`make eval\` at commit $(VERSION) on $$(date -u +%Y-%m-%d) ($$(nproc) cores, $$(uname -sm))."; \
	  echo "The target runs \`citefind eval --bench acm-cr --db $(EVAL_DB)\` twice over the same index, with textbook"; \
	  echo "BM25 settings (\`$(EVAL_TEXTBOOK)\`, run A) and with the shipped defaults (run B, docs/bm25.md),"; \
	  echo "saving each run (\`--save-run\`), then \`citefind eval --compare A B --report docs/eval/acm-cr.md\`."; \
	  echo "Each run's exact command line is listed under Runs."; echo; \
	  cat docs/eval/acm-cr.md; } > docs/eval/acm-cr.md.new && mv docs/eval/acm-cr.md.new docs/eval/acm-cr.md
	cat $(EVAL_OUT)/eval.md

# The learned reranker's built-in model (rerank/learned/default_model.json):
# LambdaMART over the top 50 candidates of the default pipeline (bm25 1 +
# citing 0.5 + dense 1, min-max, contrast embedder; the engine reranks as
# many as the model was trained on; for the pipeline without an embedder,
# default_model_sparse.json (100 candidates), pass TRAIN_PIPELINE="
# --retrievers bm25,rm3,citing --fusion minmax --weights bm25=1,rm3=0.2,citing=0.5"
# TRAIN_PARAMS=--balance TRAIN_OUT=rerank/learned/default_model_sparse.json
# and databases without an embedder), trained on three collections: ACM-CR (both
# topic sets), SciFact's train split, and a fixed sample of 2,000 ScisummNet
# sentences of its clean split without the keep_for_gold ones (which, with
# SciFact's test split, are scored after training: queries it never saw).
# Each benchmark database is built once (TRAIN_DB for ACM-CR, the make eval
# database; .cache/bench/scifact and .cache/bench/scisummnet) and caches its
# candidates. The model averages five trained with seeds 1–5 (--bag 5:
# less seed-to-seed noise), each of 300 trees (fewer than train's 600: they
# transfer better to a collection left out). `make train-loco` runs the
# leave-one-collection-out check that decided the recipe (docs/rerank.md).
DEVSETS  := $(CITEFIND_DATA)/devsets
TRAIN_DB ?= $(EVAL_DB)
TRAIN_PIPELINE := --retrievers bm25,citing,dense --fusion minmax --weights bm25=1,citing=0.5,dense=1
TRAIN_SCIFACT_DB ?= .cache/bench/scifact
TRAIN_SCISUMMNET_DB ?= .cache/bench/scisummnet
TRAIN_PARAMS ?= --balance -k 50 --bag 5 --trees 300
TRAIN_OUT ?= rerank/learned/default_model.json
TRAIN_BENCHES := --bench acm-cr --db $(TRAIN_DB) --data $(ACMCR) \
  --bench beir:train --data $(DEVSETS)/scifact --db $(TRAIN_SCIFACT_DB) \
  --bench beir:clean --data $(DEVSETS)/scisummnet --db $(TRAIN_SCISUMMNET_DB) --sample 2000 --exclude-split keep_for_gold \
  --eval-bench beir:test --data $(DEVSETS)/scifact --db $(TRAIN_SCIFACT_DB) \
  --eval-bench beir:keep_for_gold --data $(DEVSETS)/scisummnet --db $(TRAIN_SCISUMMNET_DB)
train: build
	@test -d $(ACMCR) || { echo "ACM-CR not found at $(ACMCR) (set CITEFIND_DATA)"; exit 1; }
	@test -d $(DEVSETS)/scifact -a -d $(DEVSETS)/scisummnet || { echo "SciFact and ScisummNet not found under $(DEVSETS) (set CITEFIND_DATA)"; exit 1; }
	$(BIN) train $(TRAIN_PIPELINE) $(TRAIN_PARAMS) $(TRAIN_BENCHES) --quiet --out $(TRAIN_OUT)

train-loco: build
	@test -d $(ACMCR) -a -d $(DEVSETS)/scifact -a -d $(DEVSETS)/scisummnet || { echo "ACM-CR, SciFact or ScisummNet not found under $(CITEFIND_DATA)"; exit 1; }
	$(BIN) train --loco --folds 5 $(TRAIN_PIPELINE) $(TRAIN_PARAMS) $(TRAIN_BENCHES) --quiet --loco-out $(EVAL_OUT)/loco

# Peer comparison: Xapian BM25 (Debian python3-xapian) and citefind on the same collection.
bench-xapian:
	bash benchmarks/setup-xapian.sh
	$(PY_XAPIAN) benchmarks/xapian_bm25.py --data $(ACMCR) --out benchmarks/out/xapian --json

# Whole-collection ingest + index wall time and peak RSS, and query latency.
bench-index: build
	bash benchmarks/index-bench.sh $(ACMCR)

# Load benchmark of `citefind serve` on loopback: 32 clients send /v1/search
# with ACM-CR topic texts for 30 s, after a warm-up (each query once, then
# BENCH_WARMUP of load, while the store and index caches fill); requests/s, p50/p99,
# errors, server RSS at start and end (fails on an error or >10% growth).
# BENCH_DB is a built ACM-CR database (e.g. `make demo-acm` makes $(EVAL_DB)).
BENCH_DB ?= $(EVAL_DB)
BENCH_WARMUP ?= 60s
# Query latency as `citefind query` answers (k 10, the database's
# pipeline), every ACM-CR query one at a time: make bench-query BENCH_DB=DIR.
bench-query:
	$(GO) run ./benchmarks/querylat -db $(BENCH_DB) -data $(ACMCR)

bench-serve: build
	CLIENTS=32 DURATION=30s WARMUP=$(BENCH_WARMUP) bash benchmarks/serve-bench.sh $(BENCH_DB) $(ACMCR)

# Cold `citefind cite` per style (a new process each run: citeproc-js
# compiled, the style's engine built, sample/draft20.md rendered); run it
# on an idle machine (docs/cite.md). RUNS=N runs per style (default 5).
bench-cite-cold: build
	bash benchmarks/cite-cold.sh $(BIN)

# The attacks of issue 13 (hostile clients: huge drafts, other sites' pages,
# DNS rebinding, slow bodies, MCP session floods, MCP over stdio) against
# `citefind serve` on loopback over the sample corpus, a fresh server for
# each: what each got, the time and the server's RSS (docs/robustness.md).
# HOSTILE_BIN names another binary (e.g. an older build, for comparison).
HOSTILE_BIN ?= $(BIN)
bench-hostile: build
	bash benchmarks/hostile-bench.sh $(HOSTILE_BIN)

# ACM-CR through the Weaviate backend (docs/scale.md): syncs the whole
# collection into one Weaviate node and into a 3-node cluster (3 shards x 2
# replicas), checks BM25 and RM3 parity with the local index (both topic
# sets, within 0.01 R@10 and nDCG@10), Weaviate's own BM25, sync speed,
# latency, memory and disk; then the candidate depth the re-scoring needs.
# About 1.5 hours on 2 busy cores. The figures go to benchmarks/out/weaviate.json.
bench-weaviate: test-deps
	@mkdir -p $(EVAL_OUT)
	CITEFIND_WEAVIATE_ACMCR=1 CITEFIND_WEAVIATE_REPORT=$(CURDIR)/$(EVAL_OUT)/weaviate.json \
	  $(GO) test -count=1 -v -timeout 120m -run 'TestACMCRParity|TestACMCRDepth' ./retrieve/weaviate/

# Screenshots of the web page (docs/img/serve-*.png), taken by the browser
# test against BENCH_DB (E2E_DENSE=1: hybrid search, for a database with a
# dense index).
screenshots:
	CITEFIND_E2E_DB=$(abspath $(BENCH_DB)) CITEFIND_E2E_DENSE=$(E2E_DENSE) $(GO) test -run TestBrowser -count=1 ./server/ -screenshots $(CURDIR)/docs/img

# BibTeX → CSL-JSON agreement with pandoc (`pandoc -f bibtex -t csljson`,
# scripts/install-test-deps.sh installs it) over the whole ACM-CR
# collection, variable by variable (docs/bibtex.md). pandoc's output is kept
# in benchmarks/out/pandoc-acm, so a second run takes seconds.
bench-bibtex:
	bash scripts/install-test-deps.sh
	@mkdir -p benchmarks/out
	$(GO) run ./benchmarks/bibtex-pandoc -cache benchmarks/out/pandoc-acm -examples 4 $(ACMCR)/data/acm-dl | tee benchmarks/out/bibtex-pandoc.md

# The same on BibTeX the conversion was not written for: biblatex's examples
# and Nelson Beebe's bibliographies from TeX Live (scripts/fetch-texlive-bib.sh
# fetches Debian's texlive-bibtex-extra, pinned; docs/bibtex.md).
bench-bibtex-texlive:
	bash scripts/install-test-deps.sh
	bash scripts/fetch-texlive-bib.sh
	@mkdir -p benchmarks/out
	$(GO) run ./benchmarks/bibtex-pandoc -cache .cache/texlive/pandoc -examples 3 .cache/texlive/bib/biblatex | tee benchmarks/out/bibtex-pandoc-biblatex.md
	$(GO) run ./benchmarks/bibtex-pandoc -cache .cache/texlive/pandoc -examples 3 .cache/texlive/bib/beebe | tee benchmarks/out/bibtex-pandoc-beebe.md

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

# The evaluation suite (ACM-CR, SciFact, ScisummNet; eval --suite): every
# stage against BM25 with paired intervals → docs/eval/suite.md. SUITE_DB
# keeps the suite's databases; SUITE_FLAGS adds e.g. --embedder or --rerank.
SUITE_DB ?= .cache/bench/suite
SUITE_FLAGS ?=
eval-suite: build
	@mkdir -p docs/eval
	$(BIN) eval --suite --db $(SUITE_DB) --data $(CITEFIND_DATA) --quiet $(SUITE_FLAGS) --report docs/eval/suite.md

# Serving at scale (docs/scale.md): ACM-CR synced into a 3-node Weaviate
# cluster (3 shards x 2 replicas), 32 clients through 1 and 3 serve
# processes sharing it and through the local backend, then a node killed
# -9 during a 60 s load. About 8 minutes. Figures: benchmarks/out/scale.json.
# CITEFIND_SCALE_ONLY=kill runs only the kill (after 20 s of load);
# CITEFIND_SCALE_KILL_CLIENTS=N its clients (8), CITEFIND_SCALE_KILL_NODE=I
# the node killed (1, the URL's first); CITEFIND_SCALE_KEEP=DIR
# keeps the serve and Weaviate logs there.
bench-scale: test-deps
	@mkdir -p $(EVAL_OUT)
	CITEFIND_SCALE=1 CITEFIND_SCALE_REPORT=$(CURDIR)/$(EVAL_OUT)/scale.json \
	  $(GO) test -count=1 -v -timeout 60m -run 'TestScaleServe' ./cmd/citefind/
