package weaviate

import "context"

// AllIDs exposes allIDs to the tests.
func (b *Backend) AllIDs(ctx context.Context) (map[string]bool, error) { return b.allIDs(ctx) }

// SetDepth changes the candidate depth (tests of the depth needed).
func (b *Backend) SetDepth(d int) { b.cfg.Depth = d }

// SetSearchFields restricts the candidate searches to these fields (nil:
// every scored field).
func (b *Backend) SetSearchFields(fs []string) { b.searchFields = fs }
