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
// A folder with three files:
//
//	dense.json                  Header: format, model id, dimension, doc count, export name, meta
//	papers-<random>.gob         chromem-go DB export (gob; .gob.gz when BuildOptions.Compress)
//	papers-<random>.gob.flat    sidecar: the same vectors laid out for a fast Open (derived)
//
// The export holds one collection, "papers", with one document per paper:
// ID = paper ID, Embedding = unit vector, no content or metadata (the
// canonical records live in the store). chromem-go's own persistence
// writes one file per document, so it is not used: Build writes the bytes
// chromem's DB.ExportToWriter writes for that collection (documents in ID
// order), streamed rather than encoded whole in memory as ExportToWriter
// does, into a new file, fsyncs it, and commits by renaming a new dense.json into place (the
// rename is the atomic step), then deletes the old export. Open checks
// the header's model id and dimension against its Embedder
// (ErrModelMismatch) before loading anything.
//
// The export is the canonical collection; the sidecar (SidecarName) is a
// flat copy made for loading: a 256-byte header (magic, version, byte
// order, dimension, count, the export's name and size, a CRC-32C of the
// header and one of the payload), then the float32 matrix, its int8 copy
// with row scales and L1 norms, and the sorted IDs, each section 64-byte
// aligned. Build writes it, synced and renamed into place, after the
// export and before the header (so a committed index has one, and a kill
// in between leaves the previous index). Open maps it (Linux:
// mmap with MAP_POPULATE, unmapped when the Retriever is collected;
// elsewhere one read), checks it belongs to the header's export (name,
// size, count, dimension), its length, its checksums and that the IDs
// ascend, and uses the sections in place. A missing, stale or damaged
// sidecar is no error: Open then imports the export with chromem-go as
// before, and `citefind index` on an up-to-date index writes the missing
// sidecar from the export (EnsureSidecar; no embedding). The sidecar is
// never modified in place (a mapped file must not be truncated).
//
// BenchmarkOpen (random unit vectors, sidecar against the same folder
// without it; same shared 2-core machine as below):
//
//	n       dim   sidecar   chromem import
//	10k     256   1.0 ms    94 ms
//	100k    256   20 ms     1.3 s
//
// On ACM-CR (108,677 × 512: a 282 MB sidecar next to the 332 MB export)
// Open takes 60 ms from the sidecar (170 ms with a read instead of mmap:
// copying into fresh memory costs more than the CRC) against 2.5–3.6 s
// through chromem-go (TestMeasureACMCR, which also checks both give the
// same IDs, matrix and int8 copy), and a one-shot `citefind query
// --retrievers bm25,dense` takes 0.55–0.75 s instead of 3.0–4.5 s (1.2–
// 1.7 GB peak RSS down to 0.5–0.6 GB; most of what is left is loading
// the LSA model, 0.25–0.4 s). Load average 2–7 on 2 cores, so timings
// are noisy (2026-11-22).
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
// also fails when nResults > Count(). The search therefore runs on one
// contiguous []float32 of the vectors sorted by paper ID (from the
// sidecar, or copied out of chromem-go's import, whose copy is dropped). Retrieve embeds the query (with
// EmbedQuery when the embedder has one), normalises it, and searches on
// one goroutine; k is clamped to the number of papers; ctx is checked
// every 4096 rows. Equal scores keep the lower ID.
//
// From 2048 papers on, Open also keeps an int8 copy of the matrix (each
// row scaled by its largest |x|/127, padded to 32 columns), and a query
// is two passes. Pass 1 scans the int8 rows with an integer dot product
// (AVX2 on amd64 CPUs that have it, portable Go elsewhere; the same
// integers either way) and keeps, for every row, an upper bound of its
// exact cosine (the approximate score plus the worst-case quantisation
// error, see scanQuant); the k best approximate rows are re-scored in
// float32. Pass 2 re-scores in float32 only the rows whose bound still
// reaches the k-th best exact score. Rows left out provably score lower,
// so the result is exactly the flat float32 scan's (same rows, scores and
// order) while reading a quarter of the bytes. Below 2048 papers the
// float32 matrix is scanned directly (dot product unrolled by 8, four
// accumulators, size-k min-heap).
//
// BenchmarkDenseQuery (top 10, random unit vectors; 2-core Xeon shared
// with other jobs, so timings are noisy) compares the search path with a plain
// one-goroutine float32 scan and chromem-go's two-goroutine
// QueryEmbedding:
//
//	n       dim   dense     flat     chromem
//	10k     256   0.15 ms   1.6 ms   3.6 ms
//	10k     768   0.41 ms   19 ms    10 ms
//	100k    256   13 ms     66 ms    120 ms
//	100k    768   16 ms     226 ms   190 ms
//
// (2026-11-22, load average 6 on 2 cores; -benchtime 20x, two runs.)
//
// On ACM-CR (108,677 papers × 512 LSA dimensions, k 100) the two passes
// return exactly the flat scan's hits for all 821 queries, pass 2
// re-scores 167 rows at the median (320 at most), and a query costs 9 ms
// against 63 ms for the flat scan (TestMeasureACMCR, opt-in).
package dense
