package weaviate

import (
	"context"
	"fmt"
)

// AllIDs exposes allIDs to the tests.
func (b *Backend) AllIDs(ctx context.Context) (map[string]bool, error) { return b.allIDs(ctx) }

// SetDepth changes the candidate depth (tests of the depth needed).
func (b *Backend) SetDepth(d int) { b.cfg.Depth = d }

// SetSearchFields restricts the candidate searches to these fields (nil:
// every scored field).
func (b *Backend) SetSearchFields(fs []string) { b.searchFields = fs }

// MetaSeq returns the newest metadata write number the backend has seen.
func (b *Backend) MetaSeq() int64 {
	b.metaMu.Lock()
	defer b.metaMu.Unlock()
	return b.metaSeq
}

// ReplayMetaWrite writes again what metadata write number seq wrote (its
// numbered object and the object at metaID), as a request Weaviate
// carries out late would.
func (b *Backend) ReplayMetaWrite(ctx context.Context, seq int64) error {
	m, ok, err := b.readMetaObject(ctx, b.metaSeqID(seq))
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no metadata write %d", seq)
	}
	return b.postMeta(ctx, m)
}

// HasMetaWrite reports whether the numbered object of metadata write seq
// exists.
func (b *Backend) HasMetaWrite(ctx context.Context, seq int64) (bool, error) {
	_, ok, err := b.readMetaObject(ctx, b.metaSeqID(seq))
	return ok, err
}

// UUIDFor is uuidFor: a paper's object UUID.
func UUIDFor(id string) string { return uuidFor(id) }

// PropStamp is the property a rewrite stamps papers with.
const PropStamp = propStamp
