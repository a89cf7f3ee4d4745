package sparse_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2/registry"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/datadir"
	"github.com/citefind/citefind/retrieve/sparse"
)

const (
	benchSeed  = 42
	benchVocab = 60000
)

var benchSink []corpus.Hit

// BenchmarkSparse measures Retrieve (k=100) on synthetic indexes of 1k, 10k
// and 100k papers, for sentence-length (25 words) and paragraph-length
// (125 words) queries, with the postings cache (filled by the first of the
// 64 queries that cycle) and without. Each index is built once per size.
func BenchmarkSparse(b *testing.B) {
	sizes := []struct {
		name string
		n    int
	}{
		{"docs=1k", 1_000},
		{"docs=10k", 10_000},
		{"docs=100k", 100_000},
	}
	qs := []struct {
		name  string
		words int
	}{
		{"query=short", 25},
		{"query=long", 125},
	}
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			dir := benchIndex(b, sz.n)
			for _, cache := range []struct {
				name   string
				budget int64
			}{{"cache=on", 0}, {"cache=off", -1}} {
				r, err := sparse.Open(dir, sparse.Options{PostingsCache: cache.budget})
				require.NoError(b, err)
				defer r.Close()
				for _, q := range qs {
					b.Run(q.name+"/"+cache.name, func(b *testing.B) {
						texts := queries(benchSeed+1, 64, q.words, benchVocab)
						b.ReportAllocs()
						cpu0 := cpuTime()
						n := 0
						for b.Loop() {
							hits, err := r.Retrieve(b.Context(), texts[n%len(texts)], 100)
							if err != nil {
								b.Fatal(err)
							}
							benchSink = hits
							n++
						}
						reportCPU(b, cpu0, n)
					})
				}
			}
		})
	}
}

// benchIndex returns the folder of a synthetic index of n papers. It is
// built under b.TempDir, or once and kept under $CITEFIND_SPARSE_BENCH_CACHE
// when that is set (for repeated runs while tuning; delete it after changing
// the generator or the index format).
func benchIndex(b *testing.B, n int) string {
	root := os.Getenv("CITEFIND_SPARSE_BENCH_CACHE")
	if root == "" {
		root = b.TempDir()
	}
	dir := filepath.Join(root, fmt.Sprintf("seed%d-n%d", benchSeed, n))
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	st, err := sparse.Build(b.Context(), dir, sparse.BuildOptions{}, iter(papers(benchSeed, n, benchVocab)), nil)
	require.NoError(b, err)
	b.Logf("built %d docs in %v, %d bytes", st.Docs, st.Duration, st.Bytes)
	return dir
}

// BenchmarkBuild measures Build of 10k synthetic papers with default
// options.
func BenchmarkBuild(b *testing.B) {
	ps := papers(benchSeed, 10_000, benchVocab)
	root := b.TempDir()
	b.ReportAllocs()
	cpu0 := cpuTime()
	n := 0
	for b.Loop() {
		_, err := sparse.Build(b.Context(), filepath.Join(root, fmt.Sprint(n)), sparse.BuildOptions{}, iter(ps), nil)
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	reportCPU(b, cpu0, n)
}

// cpuTime returns the user+system CPU time of the process. The machine is
// shared, so CPU time per op is reported next to wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, start time.Duration, n int) {
	if n > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(n), "cpu-ns/op")
	}
}

// BenchmarkAnalyze analyses titles and abstracts of SciFact's corpus
// (../shared/data/devsets/scifact, the first 2,000) with sparse.Analyze
// (bleve's en analyzer with its stems cached) and with bleve's en
// analyzer itself, which the index uses.
func BenchmarkAnalyze(b *testing.B) {
	f, err := os.Open(filepath.Join(datadir.Bench("devsets"), "scifact", "corpus.jsonl"))
	if err != nil {
		b.Skipf("SciFact not found (set %s): %v", datadir.Env, err)
	}
	defer f.Close()
	var texts []string
	dec := json.NewDecoder(f)
	for len(texts) < 2000 {
		var d struct{ Title, Text string }
		if err := dec.Decode(&d); err != nil {
			break
		}
		texts = append(texts, d.Title+"\n"+d.Text)
	}
	bleveEn, err := registry.NewCache().AnalyzerNamed(sparse.AnalyzerName)
	require.NoError(b, err)
	b.Run("sparse.Analyze", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sparse.Analyze(texts[i%len(texts)])
		}
	})
	b.Run("bleve-en", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			bleveEn.Analyze([]byte(texts[i%len(texts)]))
		}
	})
}
