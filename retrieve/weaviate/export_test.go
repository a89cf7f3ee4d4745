package weaviate

import "context"

// AllIDs exposes allIDs to the tests.
func (b *Backend) AllIDs(ctx context.Context) (map[string]bool, error) { return b.allIDs(ctx) }
