// Package dense is citefind's embedding retriever: papers' title and
// abstract embedded by an Embedder, stored as a chromem-go collection in
// one export file, and searched by exhaustive cosine similarity over a
// flat in-memory matrix.
//
// # Usage
//
//	emb, err := dense.NewOllama(dense.OllamaOptions{Model: "nomic-embed-text"}) // or dense.HashEmbedder{}
//	cache, err := dense.OpenCache(filepath.Join(db, "embeddings.sqlite"))
//	defer cache.Close()
//	st, err := dense.Build(ctx, filepath.Join(db, "dense"), dense.BuildOptions{
//		Embedder: emb, Cache: cache, Meta: map[string]string{"generation": gen},
//	}, nextPaper, func(n int) { bar.Set(int64(n)) })
//	...
//	r, err := dense.Open(filepath.Join(db, "dense"), emb) // ErrNoIndex: build it from the store
//	hits, err := r.Retrieve(ctx, "dense passage retrieval for open-domain QA", 100)
//	for _, h := range hits { fmt.Println(h.ID, h.Score) } // best first, cosine in [-1, 1]
//
// # Embedders
//
// Embedder is one small interface (Model, Dim, Embed). Two are provided:
//
//   - Ollama calls a server's POST /api/embed through
//     github.com/ollama/ollama/api, in batches (64 texts), with explicit
//     truncate (default true), keep_alive and options, the model's
//     retrieval prefixes (nomic-embed-text: "search_document: " /
//     "search_query: ", see KnownPrefixes), a dimension check (given, or
//     learnt from the first reply), and retries with exponential backoff
//     on refused/reset connections and 5xx statuses (3 retries from
//     200 ms, capped). Deadlines come from the caller's context. The
//     server is OLLAMA_HOST as ollama itself reads it (default
//     127.0.0.1:11434; note "http://host" means port 80).
//   - HashEmbedder hashes words and bigrams into a fixed number of
//     dimensions: deterministic and offline, lexical rather than
//     semantic; for tests and as the no-model fallback.
//
// Every embedder failure wraps ErrEmbedder; HTTP statuses come as
// *StatusError.
//
// # Index
//
// A folder with two files:
//
//	dense.json             Header: format, model id, dimension, doc count, export name, meta
//	papers-<random>.gob    chromem-go DB export (gob; .gob.gz when BuildOptions.Compress)
//
// The export holds one collection, "papers", with one document per paper:
// ID = paper ID, Embedding = unit vector, no content or metadata (the
// canonical records live in the store). chromem-go's own persistence
// writes one file per document, so it is not used: Build fills an
// in-memory chromem DB and writes it with ExportToWriter into a new file,
// fsyncs it, and commits by renaming a new dense.json into place (the
// rename is the atomic step), then deletes the old export. Open checks
// the header's model id and dimension against its Embedder
// (ErrModelMismatch) before loading anything.
//
// # Embedding cache
//
// Build looks every paper's text up in a Cache (one SQLite file) by
// (Embedder.Model(), SHA-256 of the exact text) and embeds only the
// misses, batch by batch, writing each batch back in one transaction. So
// re-indexing unchanged papers with the same embedder embeds nothing, and
// an interrupted build resumes where it stopped.
//
// # Query path
//
// chromem-go's query is brute force over a map of documents with a
// goroutine per CPU, a mutex-guarded heap and a copy of every result; it
// also fails when nResults > Count(). Open therefore uses chromem-go only
// to load: it copies the vectors, sorted by paper ID, into one contiguous
// []float32 and drops chromem's copy. Retrieve embeds the query (with
// EmbedQuery when the embedder has one), normalises it, and scans the
// matrix on one goroutine with a dot product unrolled by 8 with four
// accumulators and a size-k min-heap; since rows are in ID order and
// scanned in order, equal scores keep the lower ID without string
// comparisons. k is clamped to the number of papers; ctx is checked every
// 4096 rows.
//
// BenchmarkDenseQuery (top 10, random unit vectors, 2-core Xeon) shows the
// search path faster than a plain one-goroutine float32 scan, and than
// chromem-go's two-goroutine QueryEmbedding:
//
//	n       dim   dense    flat     chromem
//	10k     256   0.75 ms  1.5 ms   3.4 ms
//	10k     768   2.6 ms   11 ms    6.7 ms
//	100k    256   25 ms    42 ms    78 ms
//	100k    768   66 ms    117 ms   77 ms
//
// At 100k×768 a query streams 307 MB of vectors and is bound by memory
// bandwidth, which is why chromem's two goroutines come close there.
package dense
