package weaviate

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/citefind/citefind/retrieve/sparse"
)

// Schema format of the collections this package writes; a collection of
// another format is refused (re-create it).
const schemaFormat = 1

// metaKind marks citefind's metadata object.
const metaKind = "citefind papers"

// Properties of a paper object.
const (
	propPID   = "pid"   // the paper ID (field tokenization: exact, filterable)
	propPaper = "paper" // the paper as CSL-JSON (stored, not indexed)
	lenPrefix = "len_"  // len_<field>: the field's analysed length
	// propStamp is set, to a value of its own, on every paper a rewrite
	// writes (Sync: a repair, or --force). Weaviate skips a write that
	// changes nothing, index entries included; a new stamp makes every
	// replica index the paper afresh.
	propStamp = "rewritten"
)

// class, property and meta shapes of Weaviate's schema API.
type classDef struct {
	Class               string         `json:"class"`
	Description         string         `json:"description,omitempty"`
	Vectorizer          string         `json:"vectorizer,omitempty"`
	VectorIndexConfig   map[string]any `json:"vectorIndexConfig,omitempty"`
	InvertedIndexConfig *invertedCfg   `json:"invertedIndexConfig,omitempty"`
	ShardingConfig      map[string]any `json:"shardingConfig,omitempty"`
	ReplicationConfig   *replCfg       `json:"replicationConfig,omitempty"`
	Properties          []propDef      `json:"properties"`
}

type invertedCfg struct {
	BM25      *bm25Cfg       `json:"bm25,omitempty"`
	Stopwords map[string]any `json:"stopwords,omitempty"`
}

type bm25Cfg struct {
	K1 float64 `json:"k1"`
	B  float64 `json:"b"`
}

type replCfg struct {
	Factor           int    `json:"factor"`
	AsyncEnabled     bool   `json:"asyncEnabled"`
	DeletionStrategy string `json:"deletionStrategy,omitempty"`
}

type propDef struct {
	Name            string   `json:"name"`
	DataType        []string `json:"dataType"`
	Tokenization    string   `json:"tokenization,omitempty"`
	IndexFilterable *bool    `json:"indexFilterable,omitempty"`
	IndexSearchable *bool    `json:"indexSearchable,omitempty"`
}

// meta is the metadata object of a collection (one object in the
// collection Config.metaClass()).
type meta struct {
	Kind   string `json:"kind"`
	Format int    `json:"format"`
	// Store identifies the citefind database synced into the collection.
	Store string `json:"store"`
	// Generation is the store generation every paper object reflects; -1
	// before the first complete Sync.
	Generation int64 `json:"generation"`
	// Target and After are the checkpoint of a Sync in progress from
	// Generation towards Target: the papers changed up to Target with IDs
	// ≤ After are in. Target is -1 when no Sync is in progress.
	Target int64  `json:"target"`
	After  string `json:"after"`
	// Embedder is the embedder spec of the vectors ("none" without),
	// followed by "|" and the identity of their model when the sync knew
	// it (embedderKind, embedderModel), and Dim their dimension (0
	// without).
	Embedder string `json:"embedder"`
	Dim      int    `json:"dim"`
	// Fields are the analysed text fields stored (sparse field names).
	Fields  []string `json:"fields"`
	Updated string   `json:"updated"`
	// The collection statistics BM25 scores with, kept by Sync from the
	// papers it writes (exact and summed over all shards, unlike
	// Weaviate's per-shard ones): N papers, the total analysed length of
	// each field (JSON object field → tokens), and the generation they
	// reflect (-1 while they are being rebuilt). The document frequencies
	// are objects of the collection Config.dfClass().
	N        int64  `json:"n"`
	Totals   string `json:"totals"`
	StatsGen int64  `json:"statsgen"`
	// Seq numbers the writes of the metadata (see writeMeta); 0 in a
	// collection written before it was kept.
	Seq int64 `json:"seq"`
	// Rewrite, when set, says that the papers changed after generation
	// *Rewrite (every paper: -1) were written while a replica failed: a
	// node killed in the middle of a write can keep, after Weaviate's WAL
	// recovery, an object without some of its index entries, which
	// async replication does not see (it compares objects) and a write of
	// the same object does not mend (Weaviate skips it). The next Sync
	// writes them again with a new stamp (propStamp).
	Rewrite *int64 `json:"rewrite,omitempty"`
}

// mergeRewrite returns the rewrite mark covering both r and the papers
// changed after generation from.
func mergeRewrite(r *int64, from int64) *int64 {
	if r != nil && *r <= from {
		return r
	}
	return &from
}

func boolp(b bool) *bool { return &b }

// fieldsFor returns the analysed fields to store: text and title always,
// and every other field named with a positive weight.
func fieldsFor(weights map[string]float64) []string {
	out := []string{sparse.FieldText, sparse.FieldTitle}
	for _, f := range sparse.KnownFields() {
		if weights[f] > 0 && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// paperClass is the definition of the papers collection.
func (b *Backend) paperClass(fields []string) classDef {
	props := []propDef{
		{Name: propPID, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: boolp(true), IndexSearchable: boolp(false)},
		{Name: propPaper, DataType: []string{"text"}, IndexFilterable: boolp(false), IndexSearchable: boolp(false)},
		intProp(propStamp),
	}
	for _, f := range fields {
		// Whitespace tokenization: Weaviate indexes citefind's analysed
		// tokens as they are. Every field is searchable (BM25 candidates
		// per field) and filterable (exact document frequencies).
		props = append(props,
			propDef{Name: f, DataType: []string{"text"}, Tokenization: "whitespace", IndexFilterable: boolp(true), IndexSearchable: boolp(true)},
			propDef{Name: lenPrefix + f, DataType: []string{"int"}, IndexFilterable: boolp(true), IndexSearchable: boolp(false)})
	}
	c := classDef{
		Class:             b.cfg.Collection,
		Description:       fmt.Sprintf("citefind papers, schema format %d: analysed fields %s", schemaFormat, strings.Join(fields, ", ")),
		Vectorizer:        "none",
		VectorIndexConfig: map[string]any{"distance": "cosine"},
		InvertedIndexConfig: &invertedCfg{
			BM25:      &bm25Cfg{K1: b.k1, B: b.b},
			Stopwords: map[string]any{"preset": "none"},
		},
		ReplicationConfig: b.replication(),
		Properties:        props,
	}
	if b.cfg.Shards > 0 {
		c.ShardingConfig = map[string]any{"desiredCount": b.cfg.Shards}
	}
	return c
}

func (b *Backend) replication() *replCfg {
	r := &replCfg{Factor: b.cfg.replicas()}
	if r.Factor > 1 {
		// Async replication repairs replicas that missed writes (a node
		// down during a delete, say); deletions win over older objects.
		r.AsyncEnabled = true
		r.DeletionStrategy = "TimeBasedResolution"
	}
	return r
}

func (b *Backend) metaClassDef() classDef {
	t := func(n string) propDef {
		return propDef{Name: n, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: boolp(false), IndexSearchable: boolp(false)}
	}
	i := intProp
	return classDef{
		Class:             b.cfg.metaClass(),
		Description:       "citefind: metadata of the collection " + b.cfg.Collection,
		Vectorizer:        "none",
		ReplicationConfig: b.replication(),
		Properties: []propDef{t("kind"), i("format"), t("store"), i("generation"), i("target"), t("after"),
			t("embedder"), i("dim"), {Name: "fields", DataType: []string{"text[]"}, Tokenization: "field", IndexFilterable: boolp(false), IndexSearchable: boolp(false)}, t("updated"),
			i("n"), t("totals"), i("statsgen"), i(propSeq), i(propRewrite)},
	}
}

// propSeq is the metadata's write number (meta.Seq), propRewrite its
// rewrite mark (meta.Rewrite).
const (
	propSeq     = "seq"
	propRewrite = "rewrite"
)

// intProp is an int property, stored and not indexed.
func intProp(name string) propDef {
	return propDef{Name: name, DataType: []string{"int"}, IndexFilterable: boolp(false), IndexSearchable: boolp(false)}
}

// Properties of a document-frequency object: the term, and per field the
// number of papers whose field holds it.
const (
	propTerm = "term"
	dfPrefix = "df_"
)

// dfClassDef is the collection of document frequencies: one object per
// analysed term (UUID from the term), found by exact match on term.
func (b *Backend) dfClassDef(fields []string) classDef {
	props := []propDef{{Name: propTerm, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: boolp(true), IndexSearchable: boolp(false)}}
	for _, f := range fields {
		props = append(props, propDef{Name: dfPrefix + f, DataType: []string{"int"}, IndexFilterable: boolp(false), IndexSearchable: boolp(false)})
	}
	return classDef{
		Class:             b.cfg.dfClass(),
		Description:       "citefind: document frequencies of the collection " + b.cfg.Collection,
		Vectorizer:        "none",
		VectorIndexConfig: map[string]any{"skip": true},
		ReplicationConfig: b.replication(),
		Properties:        props,
	}
}

// metaID is the UUID of the metadata object every write replaces (the
// latest write as far as the replicas know; see writeMeta).
func (b *Backend) metaID() string { return uuidFor("meta:" + b.cfg.Collection) }

// metaSeqID is the UUID of the metadata object of write number seq.
func (b *Backend) metaSeqID(seq int64) string {
	return uuidFor("meta:" + b.cfg.Collection + "#" + strconv.FormatInt(seq, 10))
}

// uuidFor returns the name-based (version 5, SHA-1) UUID of name in
// citefind's namespace: a paper's object ID is uuidFor(paper ID), so
// writing a paper twice replaces one object.
func uuidFor(name string) string {
	h := sha1.New()
	h.Write(uuidNamespace[:])
	h.Write([]byte(name))
	s := h.Sum(nil)
	s[6] = (s[6] & 0x0f) | 0x50
	s[8] = (s[8] & 0x3f) | 0x80
	x := hex.EncodeToString(s[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// uuidNamespace is citefind's UUID namespace (a fixed random UUID).
var uuidNamespace = [16]byte{0x6b, 0x1f, 0x0e, 0x52, 0x93, 0x2c, 0x4d, 0x0a, 0x8e, 0x61, 0x0c, 0x7d, 0x35, 0x4f, 0xa2, 0x19}

// getClass reads a class definition; ok false when it does not exist.
func (b *Backend) getClass(ctx context.Context, name string) (classDef, shardingInfo, bool, error) {
	var raw struct {
		classDef
		ShardingConfig    shardingInfo `json:"shardingConfig"`
		ReplicationConfig replCfg      `json:"replicationConfig"`
	}
	err := b.c.do(ctx, http.MethodGet, "/v1/schema/"+name, nil, &raw, b.cfg.timeout())
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return classDef{}, shardingInfo{}, false, nil
	}
	if err != nil {
		return classDef{}, shardingInfo{}, false, fmt.Errorf("weaviate: read the schema of %s: %w", name, err)
	}
	cd := raw.classDef
	cd.ReplicationConfig = &raw.ReplicationConfig
	return cd, raw.ShardingConfig, true, nil
}

type shardingInfo struct {
	DesiredCount int `json:"desiredCount"`
	ActualCount  int `json:"actualCount"`
}

// checkClass verifies that an existing papers collection is citefind's:
// the paper properties with their tokenization, and the analysed fields.
func checkClass(cd classDef, fields []string) error {
	want := map[string]string{propPID: "field", propPaper: ""}
	for _, f := range fields {
		want[f] = "whitespace"
		want[lenPrefix+f] = "-"
	}
	have := map[string]propDef{}
	for _, p := range cd.Properties {
		have[p.Name] = p
	}
	for name, tok := range want {
		p, ok := have[name]
		switch {
		case !ok:
			return fmt.Errorf("it has no property %q", name)
		case tok == "-" && (len(p.DataType) != 1 || p.DataType[0] != "int"):
			return fmt.Errorf("property %q is %v, not int", name, p.DataType)
		case tok == "-":
		case len(p.DataType) != 1 || p.DataType[0] != "text":
			return fmt.Errorf("property %q is %v, not text", name, p.DataType)
		case tok != "" && p.Tokenization != tok:
			return fmt.Errorf("property %q has tokenization %q, not %q", name, p.Tokenization, tok)
		}
	}
	for _, f := range fields {
		if p := have[f]; p.IndexSearchable != nil && !*p.IndexSearchable {
			return fmt.Errorf("property %q is not searchable", f)
		}
	}
	return nil
}

// createClass creates a class; an existing class of that name is not an
// error (another process may have created it at the same time).
func (b *Backend) createClass(ctx context.Context, cd classDef) error {
	err := b.c.do(ctx, http.MethodPost, "/v1/schema", cd, nil, b.cfg.writeTimeout())
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusUnprocessableEntity && strings.Contains(strings.ToLower(se.Body), "already exists") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("weaviate: create collection %s: %w", cd.Class, err)
	}
	return nil
}

// maxMetaProbes bounds how many later writes readMeta looks for in one
// read.
const maxMetaProbes = 10000

// readMeta reads the newest metadata; ok false when there is none.
//
// Every write of the metadata (writeMeta) creates an object of its own,
// numbered one above the newest known, and also replaces the object at
// metaID with the same content. A write whose request timed out can still
// be carried out by Weaviate later — after the write that followed it,
// even after a node restart — and it would then replace newer metadata
// with older (a sync's last checkpoint coming back over its final state:
// seen in TestClusterKill). A late write of number k can only rewrite
// object k with the content it always had, so readMeta starts from the
// object at metaID (or the newest this Backend knows, when higher) and
// follows the numbered objects upwards to the last one there is: two
// requests when nothing changed.
func (b *Backend) readMeta(ctx context.Context) (meta, bool, error) {
	b.metaMu.Lock()
	known := b.metaSeq
	b.metaMu.Unlock()
	cur, found, err := b.readMetaObject(ctx, b.metaID())
	if err != nil {
		return meta{}, false, err
	}
	if !found {
		// No metadata (a collection deleted since, perhaps): nothing known.
		b.metaMu.Lock()
		b.metaSeq = 0
		b.metaMu.Unlock()
		return meta{}, false, nil
	}
	if known > cur.Seq {
		// The object at metaID went back (a late write): continue from
		// the newest this Backend has seen, if it is still there.
		m, found, err := b.readMetaObject(ctx, b.metaSeqID(known))
		if err != nil {
			return meta{}, false, err
		}
		if found && m.Seq == known {
			cur = m
		}
	}
	for range maxMetaProbes {
		next, found, err := b.readMetaObject(ctx, b.metaSeqID(cur.Seq+1))
		if err != nil {
			return meta{}, false, err
		}
		if !found || next.Seq != cur.Seq+1 {
			break
		}
		cur = next
	}
	b.metaMu.Lock()
	b.metaSeq = cur.Seq
	b.metaMu.Unlock()
	return cur, true, nil
}

// readMetaObject reads one metadata object by UUID (getObject); found
// false when there is none.
func (b *Backend) readMetaObject(ctx context.Context, id string) (meta, bool, error) {
	var obj struct {
		Properties meta `json:"properties"`
	}
	found, err := b.getObject(ctx, b.cfg.metaClass(), id, &obj)
	if err != nil {
		return meta{}, false, fmt.Errorf("weaviate: read the metadata of %s: %w", b.cfg.Collection, err)
	}
	return obj.Properties, found, nil
}

// writeMeta writes the metadata as write number one above the newest
// known (an object of its own, and the object at metaID), at the write
// consistency level; see readMeta.
func (b *Backend) writeMeta(ctx context.Context, m meta) error {
	m.Kind, m.Format = metaKind, schemaFormat
	m.Updated = time.Now().UTC().Format(time.RFC3339)
	if m.Embedder == "" {
		m.Embedder = "none"
	}
	if err := b.ensureMetaSeq(ctx); err != nil {
		return err
	}
	b.metaMu.Lock()
	m.Seq = max(b.metaSeq, b.metaUsed, m.Seq) + 1
	b.metaUsed = m.Seq
	b.metaMu.Unlock()
	err := b.postMeta(ctx, m)
	// The number stays used (metaUsed) even when the write failed:
	// Weaviate may still carry it out later, and the next write must not
	// reuse the number with other content. (The gap a write that never
	// lands leaves is crossed by the object at metaID, which the next
	// write updates.)
	if err != nil {
		return fmt.Errorf("weaviate: write the metadata of %s: %w", b.cfg.Collection, err)
	}
	b.metaMu.Lock()
	b.metaSeq = max(b.metaSeq, m.Seq)
	b.metaMu.Unlock()
	return nil
}

// postMeta writes m as write number m.Seq: its numbered object and the
// object at metaID, in one batch (which creates or replaces them). The
// objects Weaviate refuses are written again, with backoff, as a sync's
// papers are (a node that died is refused until Weaviate stops counting
// its replicas: a sync failed on its checkpoint so in 5 of 7
// TestClusterKill runs on 2026-11-29, before this).
func (b *Backend) postMeta(ctx context.Context, m meta) error {
	props := metaProps(m)
	objs := []object{{Class: b.cfg.metaClass(), ID: b.metaSeqID(m.Seq), Properties: props},
		{Class: b.cfg.metaClass(), ID: b.metaID(), Properties: props}}
	w := b.postRetrying(ctx, objs)
	switch {
	case w.err != nil && w.firstMsg != "":
		return fmt.Errorf("%s (then: %w)", w.firstMsg, w.err)
	case w.err != nil:
		return w.err
	case len(w.failed) > 0:
		return fmt.Errorf("%s (after %d attempts)", w.lastMsg, objectAttempts)
	}
	return nil
}

// metaProps are the properties of m's object.
func metaProps(m meta) map[string]any {
	p := map[string]any{
		"kind": m.Kind, "format": m.Format, "store": m.Store, "generation": m.Generation, "target": m.Target,
		"after": m.After, "embedder": m.Embedder, "dim": m.Dim, "fields": m.Fields, "updated": m.Updated,
		"n": m.N, "totals": m.Totals, "statsgen": m.StatsGen, propSeq: m.Seq}
	if m.Rewrite != nil {
		p[propRewrite] = *m.Rewrite
	}
	return p
}

// ensureMetaSeq adds the properties added since (the write number, the
// rewrite mark) to a metadata collection made before them (once per
// Backend).
func (b *Backend) ensureMetaSeq(ctx context.Context) error {
	return b.ensureProps(ctx, &b.metaSeqReady, b.cfg.metaClass(), intProp(propSeq), intProp(propRewrite))
}

// ensureStamp adds propStamp to a papers collection made before it (once
// per Backend).
func (b *Backend) ensureStamp(ctx context.Context) error {
	return b.ensureProps(ctx, &b.stampReady, b.cfg.Collection, intProp(propStamp))
}

// ensureProps runs addProps once per Backend: *ready (guarded by metaMu)
// says it has, on an existing collection.
func (b *Backend) ensureProps(ctx context.Context, ready *bool, class string, props ...propDef) error {
	b.metaMu.Lock()
	done := *ready
	b.metaMu.Unlock()
	if done {
		return nil
	}
	ok, err := b.addProps(ctx, class, props...)
	if err != nil {
		return err
	}
	b.metaMu.Lock()
	*ready = ok
	b.metaMu.Unlock()
	return nil
}

// addProps adds to an existing collection the properties it lacks; exists
// is false when there is no such collection (its definition, when made,
// has them).
func (b *Backend) addProps(ctx context.Context, class string, props ...propDef) (exists bool, err error) {
	cd, _, ok, err := b.getClass(ctx, class)
	if err != nil || !ok {
		return false, err
	}
	for _, prop := range props {
		if slices.ContainsFunc(cd.Properties, func(p propDef) bool { return p.Name == prop.Name }) {
			continue
		}
		err := b.c.do(ctx, http.MethodPost, "/v1/schema/"+class+"/properties", prop, nil, b.cfg.timeout())
		var se *StatusError
		// Another process may have added it meanwhile (Weaviate 1.35:
		// 422 "conflict for property: already in use").
		if err != nil && !(errors.As(err, &se) && se.Code == http.StatusUnprocessableEntity &&
			(strings.Contains(strings.ToLower(se.Body), "already exists") || strings.Contains(strings.ToLower(se.Body), "already in use"))) {
			return true, fmt.Errorf("weaviate: add %q to the schema of %s: %w", prop.Name, class, err)
		}
	}
	return true, nil
}

// layout is a collection's shards and replication factor.
type layout struct{ shards, replicas int }

// inspect reads the collection's schema and metadata and checks that they
// are citefind's. exists is false when the papers collection is absent.
func (b *Backend) inspect(ctx context.Context) (m meta, exists bool, lay layout, err error) {
	m, exists, err = b.inspect1(ctx, &lay)
	return m, exists, lay, err
}

func (b *Backend) inspect1(ctx context.Context, lay *layout) (m meta, exists bool, err error) {
	cd, sh, ok, err := b.getClass(ctx, b.cfg.Collection)
	if err != nil || !ok {
		return meta{}, false, err
	}
	_, _, metaOK, err := b.getClass(ctx, b.cfg.metaClass())
	if err != nil {
		return meta{}, true, err
	}
	if !metaOK {
		return meta{}, true, fmt.Errorf("%w: %s exists but has no citefind metadata (collection %s); it was not made by citefind: use another collection name", ErrForeignCollection, b.cfg.Collection, b.cfg.metaClass())
	}
	m, ok, err = b.readMeta(ctx)
	if err != nil {
		return meta{}, true, err
	}
	if !ok || m.Kind != metaKind {
		return meta{}, true, fmt.Errorf("%w: %s has no citefind metadata object in %s; use another collection name", ErrForeignCollection, b.cfg.Collection, b.cfg.metaClass())
	}
	if m.Format != schemaFormat {
		return meta{}, true, fmt.Errorf("%w: %s has schema format %d, this citefind writes %d: delete the collection (and %s) or use another name", ErrSchemaMismatch, b.cfg.Collection, m.Format, schemaFormat, b.cfg.metaClass())
	}
	if err := checkClass(cd, m.Fields); err != nil {
		return meta{}, true, fmt.Errorf("%w: %s: %v", ErrForeignCollection, b.cfg.Collection, err)
	}
	for f, w := range b.weights {
		if w > 0 && !slices.Contains(m.Fields, f) {
			return meta{}, true, fmt.Errorf("%w: %s stores the fields %s, not %q that the BM25 field weights name: sync into a new collection", ErrSchemaMismatch, b.cfg.Collection, strings.Join(m.Fields, ", "), f)
		}
	}
	// Shards and replicas named in the URL must be the collection's.
	if b.cfg.Shards > 0 && sh.DesiredCount != b.cfg.Shards {
		return meta{}, true, fmt.Errorf("%w: %s has %d shards, the URL asks for %d (the shard count is fixed at creation)", ErrSchemaMismatch, b.cfg.Collection, sh.DesiredCount, b.cfg.Shards)
	}
	if cd.ReplicationConfig != nil {
		f := cd.ReplicationConfig.Factor
		if b.cfg.Replicas > 0 && f != b.cfg.Replicas {
			return meta{}, true, fmt.Errorf("%w: %s has %d replicas, the URL asks for %d", ErrSchemaMismatch, b.cfg.Collection, f, b.cfg.Replicas)
		}
		lay.replicas = f
	}
	lay.shards = sh.DesiredCount
	return m, true, nil
}

// embedderKind is the embedder spec of a recorded embedder ("contrast" of
// "contrast|contrast-768@0ea62d0fcec1").
func embedderKind(recorded string) string {
	kind, _, _ := strings.Cut(recorded, "|")
	return kind
}

// embedderModel is the model identity of a recorded embedder ("" when the
// sync that wrote the vectors did not know it).
func embedderModel(recorded string) string {
	_, model, _ := strings.Cut(recorded, "|")
	return model
}
