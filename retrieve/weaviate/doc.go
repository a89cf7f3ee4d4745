// Package weaviate is a citefind search backend (retrieve.Backend and
// retrieve.Syncer) on a Weaviate server or cluster, registered under the
// URL scheme "weaviate":
//
//	weaviate://HOST:PORT/COLLECTION[?shards=N&replicas=R&write=L&read=L&depth=N&timeout=D&batch=N&flushwait=D&checkpoint=D]
//
// The local store stays the canonical record; Sync copies its papers into
// the collection, and a `serve` with no local store can answer from the
// collection alone (Papers returns the stored papers).
//
//	import _ "github.com/citefind/citefind/retrieve/weaviate" // registers "weaviate"
//
//	be, err := retrieve.OpenBackend(ctx, "weaviate://127.0.0.1:8080/Papers?shards=3&replicas=2",
//		retrieve.Env{Store: st, BM25: retrieve.BM25Params{K1: 2, B: 0.75,
//			FieldWeights: map[string]float64{"text": 1, "title": 0.25}}})
//	rep, err := be.(retrieve.Syncer).Sync(ctx, st, retrieve.SyncOptions{Progress: show})
//	terms, _ := sparse.WeightQuery("dense passage retrieval", 1) // k3 = 1
//	hits, err := be.BM25(ctx, toRetrieveTerms(terms), 100)    // best first
//
// # Client
//
// The package speaks Weaviate's REST API (schema, batch writes and
// deletes, objects, nodes) and GraphQL (Get, Aggregate) with net/http, not
// the official Go client (github.com/weaviate/weaviate-go-client/v5, which
// the module proxy serves): citefind needs a handful of requests, and
// with its own client it adds no dependency (the official one brings gRPC,
// go-openapi and their trees), sees every per-object error of a batch,
// sets the consistency level and a timeout on every request, and retries
// transport errors, 5xx, 429 and GraphQL errors with exponential backoff
// (5 attempts, 200 ms doubling to at most 5 s, ±25% jitter) within the
// caller's context; ErrUnavailable says the retries ran out.
//
// # Collection
//
// Each paper is one object with a UUID derived from its ID (version 5), so
// writing it twice replaces it, and these properties: pid (the ID, exact
// match), paper (the CSL-JSON item, stored only), and for each analysed
// field (text and title, and abstract or keywords when the BM25 field
// weights name them) the field's tokens as sparse.Analyze gives them
// (bleve's "en" analyser: stemmed, stop words dropped), joined by spaces,
// in a whitespace-tokenized property, with len_<field>, their count. Only
// text is BM25-searchable in Weaviate (k1 and b from the database's
// pipeline, no stop words); every field is filterable, which gives exact
// document frequencies. No vectorizer: vectors come from the database's
// embedder through SyncOptions.Embed (cosine distance, HNSW). A second
// collection, COLLECTION_citefind, holds one metadata object: schema
// format, the identity of the store synced in, the generation the
// collection reflects, a checkpoint of a sync in progress, the embedder
// and dimension, and the stored fields. A collection of that name without
// this metadata is refused (ErrForeignCollection), and so is one synced
// from another database or holding another embedder's vectors
// (ErrSchemaMismatch) unless Sync is forced.
//
// # Ranking: the same BM25 as package sparse
//
// Weaviate's own BM25 does not rank as citefind's (measured in
// docs/scale.md): one average length for all searched properties, integer
// property boosts only, document frequencies averaged over properties,
// per-shard statistics, and query weights only as repeated terms. So
// Weaviate only proposes candidates: its BM25 over the analysed text with
// the query's terms (each repeated in proportion to its weight, at most 8
// times) returns max(depth, 3k) papers (depth 300 by default), with their
// analysed fields. Each candidate is then scored exactly as
// sparse.Retriever scores it: Σ_f w_f Σ_t weight_t · idf_f(t) ·
// tf·(k1+1)/(tf + k1·(1−b+b·dl/avgdl_f)), with tf and dl counted from the
// stored tokens, and N, avgdl_f (Aggregate sums of len_<field>) and
// df_f(t) (Aggregate counts of objects whose field holds t) over the whole
// collection, summed across shards, so shard placement changes nothing.
// With the same papers the scores are the local backend's to the last bit
// (tested); a paper the candidates miss is the only possible difference,
// and depth bounds it. The statistics are cached per collection state:
// every RefreshInterval a query re-reads the metadata object, and a
// changed generation or checkpoint drops the cache.
//
// # Consistency and failure
//
// Writes (batches, deletes, metadata) use QUORUM and reads ONE when the
// collection has at most 2 replicas, QUORUM reads with 3 or more: every
// read then overlaps the last acknowledged write (W + R > replicas), and
// with 2 replicas queries go on with one node down (tested with kill -9).
// A write needs every replica of its shard with 2 replicas, so Sync waits
// (with backoff) and fails with ErrIncomplete while a node is down; the
// next Sync resumes from its checkpoint. URL parameters write= and read=
// override the levels. Sync records the new generation only after every
// batch is acknowledged; refused objects are retried with backoff and
// reported (SyncReport.Warnings), never silently dropped.
package weaviate
