// Package weaviate is a citefind search backend (retrieve.Backend and
// retrieve.Syncer) on a Weaviate server or cluster, registered under the
// URL scheme "weaviate":
//
//	weaviate://HOST:PORT[,HOST:PORT…]/COLLECTION[?shards=N&replicas=R&write=L&read=L&depth=N&timeout=D&hedge=D&batch=N&flushwait=D&checkpoint=D]
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
//	terms, _ := sparse.QueryTerms("dense passage retrieval", 1) // k3 = 1
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
// (5 attempts for reads, 8 for writes, 200 ms doubling to at most 5 s,
// ±25% jitter) within the caller's context; ErrUnavailable says the
// retries ran out. The URL may name several nodes of a cluster: requests
// go to the first until an attempt there fails (transport error, timeout,
// 5xx, 429, a GraphQL error), then to the next, for the retry and the
// requests after it; a read (a search, a lookup) that its node has not
// answered after hedge (3 s by default; hedge=none turns it off) is sent
// to the next node as well, and the first answer wins (a hedge= other
// than none with a single node is refused: there is no next node). Any
// node of a Weaviate cluster coordinates any request, so the answers are
// the same. IPv6 nodes are written in brackets, with or without a port:
// weaviate://[::1]:8080,[fd00::2]/COLLECTION.
//
// # Collection
//
// Each paper is one object with a UUID derived from its ID (version 5), so
// writing it twice replaces it, and these properties: pid (the ID, exact
// match), paper (the CSL-JSON item, stored only), and for each analysed
// field (text and title, and abstract or keywords when the BM25 field
// weights name them) the field's tokens as sparse.Analyze gives them
// (bleve's "en" analyser: stemmed, stop words dropped), joined by spaces,
// in a whitespace-tokenized, BM25-searchable property (k1 and b from the
// database's pipeline, no stop words), with len_<field>, their count. No
// vectorizer: vectors come from the database's embedder through
// SyncOptions.Embed (cosine distance, HNSW). A second collection,
// COLLECTION_citefind, holds the metadata: schema format, the
// identity of the store synced in, the generation the collection
// reflects, a checkpoint of a sync in progress, the embedder and
// dimension, the stored fields and the BM25 statistics (below), one
// object per write, numbered, plus one that every write replaces (a write
// Weaviate carries out late cannot bring older metadata back: readers
// follow the numbers up to the newest); a third,
// COLLECTION_citefind_df, the document frequencies. A collection of that
// name without
// this metadata is refused (ErrForeignCollection), and so is one synced
// from another database or holding another embedder's vectors
// (ErrSchemaMismatch) unless Sync is forced. The metadata records the
// identity of the model that made the vectors (SyncOptions.Model): a sync
// with another model of the same embedder (a trained embedder retrained)
// embeds every paper again, and Stats reports the model (VectorModel), so
// that the engine refuses query vectors of a model the collection does not
// hold.
//
// # Ranking: the same BM25 as package sparse
//
// Weaviate's own BM25 does not rank as citefind's (measured in
// docs/scale.md): one average length for all searched properties, integer
// property boosts only, document frequencies averaged over properties,
// per-shard statistics, query weights only as repeated terms, and (1.35.2)
// papers still in a memtable skipped once a shard holds enough hits. So
// Weaviate only proposes candidates: its BM25 over each scored field (text
// and title, in parallel), with the query's terms each repeated in
// proportion to its weight (at most 8 times), returns max(300, 3k)
// papers per field (depth=N overrides) with their analysed fields. Each
// candidate is then scored exactly as sparse.Retriever scores it:
// Σ_f w_f Σ_t weight_t · idf_f(t) · tf·(k1+1)/(tf + k1·(1−b+b·dl/avgdl_f)),
// with tf and dl counted from the stored tokens and N, avgdl_f and
// df_f(t) from statistics that Sync keeps for the whole collection: N and
// the field totals in the metadata object, the document frequencies in
// COLLECTION_citefind_df (one object per term). An incremental Sync
// updates them from the papers it writes and the stored versions they
// replace or that it deletes; a first, forced, resumed or interrupted one
// recomputes them from the store. They do not depend on the shards, so a
// sharded collection ranks as one shard does; with the same papers the
// scores are the local backend's to the last bit (tested), and a paper
// the candidates miss is the only possible difference. (Weaviate's
// Aggregate could count them, but it fails whenever a node is down.)
// Queries cache the statistics while the metadata (generation, sync
// checkpoint) is unchanged, re-reading it every RefreshInterval in the
// background: a query waits for that read at most a second, and one that
// fails leaves the cached statistics in use. A serve with no local store
// follows the collection's generation from the same cache (Generation),
// not from Stats, whose object counts fail while a node is down.
//
// After writing, Sync waits (at most flushwait, 3 min by default) until
// Weaviate's BM25 finds the papers it wrote last with their own text,
// i.e. until Weaviate has flushed its memtables (it does so once they are
// idle for PERSISTENCE_MEMTABLES_FLUSH_IDLE_AFTER_SECONDS, 60 by default),
// and warns when the wait runs out.
//
// # Consistency and failure
//
// Writes (batches, deletes, metadata) use QUORUM. Weaviate counts QUORUM
// over the replicas it can reach: with a node down a write succeeds on the
// other replica, and Sync warns which shards had fewer replicas reachable;
// Weaviate's async replication (enabled on collections with 2 or more
// replicas) copies the missed objects when the node returns, and Stats
// shows whether the replicas agree. Searches and lookups use ONE with up
// to 2 replicas (Weaviate 1.35 refuses a search over several shards at
// QUORUM or ALL while a node is down and the shards have different numbers
// of live replicas), QUORUM with 3 or more; the metadata and the document
// frequencies are read at ALL (the newest replica wins and the others are
// repaired), at the read level when ALL fails; papers a lookup by ID does
// not find (a replica's filter index can lag its objects) are read by
// UUID. URL parameters write= and
// read= override the levels. Every request is retried with backoff;
// refused objects of a batch are retried and reported
// (SyncReport.Warnings); when some still fail, Sync returns ErrIncomplete
// and the collection keeps its previous generation. Sync records the new
// generation only after every batch is acknowledged, and checkpoints its
// progress (the last paper ID of the contiguous acknowledged batches) so
// that a run killed part-way is completed by the next.
//
// A node killed in the middle of a write can keep, after Weaviate's WAL
// recovery, an object without some of its index entries; async
// replication compares objects and does not see it, and Weaviate skips a
// write of an unchanged object. So a sync in which a paper write was
// refused or failed, or a replica was lost while it wrote, marks its papers
// in the metadata (Stats says so), and the next sync writes them again
// with a new stamp (property "rewritten"), which makes every replica index
// them afresh (SyncReport.Rewritten); a resumed run stamps what it sends,
// and so does a forced sync (citefind index --force), which mends the
// whole collection.
package weaviate
