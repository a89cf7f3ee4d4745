package weaviate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNewlyMissing(t *testing.T) {
	for _, c := range []struct {
		before, after string
		want          bool
	}{
		{"", "", false},
		{"", "shard A has 1 of 2 replicas reachable", true},
		{"shard A has 1 of 2 replicas reachable", "shard A has 1 of 2 replicas reachable", false},
		{"shard A has 1 of 2 replicas reachable", "", false},
		{"shard A has 1 of 2 replicas reachable", "shard A has 1 of 2 replicas reachable; shard B has 1 of 2 replicas reachable", true},
		{"node node3 is UNHEALTHY; shard A has 1 of 2 replicas reachable", "shard A has 1 of 2 replicas reachable", false},
		{"unknown", "", false},
		{"unknown", "shard A has 1 of 2 replicas reachable", true},
	} {
		assert.Equal(t, c.want, newlyMissing(c.before, c.after), "%q → %q", c.before, c.after)
	}
}

func TestMergeRewrite(t *testing.T) {
	gen := func(g int64) *int64 { return &g }
	assert.Equal(t, int64(4), *mergeRewrite(nil, 4))
	assert.Equal(t, int64(2), *mergeRewrite(gen(2), 4), "the earlier mark covers more papers")
	assert.Equal(t, int64(-1), *mergeRewrite(gen(3), -1), "every paper")
}
