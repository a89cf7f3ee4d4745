package weaviatetest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCondense(t *testing.T) {
	line := `{"action":"raft","backoff time":320000000,"build_git_commit":"","build_go_version":"go1.26.8","build_wv_version":"1.35.2","error":"dial tcp 127.0.0.1:33429: connect: connection refused","level":"error","msg":"failed to heartbeat to","peer":"127.0.0.1:33429","time":"2026-11-27T23:52:01Z"}`
	assert.Equal(t, "23:52:01 error raft failed to heartbeat to backoff time=3.2e+08 error=dial tcp 127.0.0.1:33429: connect: connection refused peer=127.0.0.1:33429", condense(line))
	assert.Equal(t, "panic: not json", condense("panic: not json"), "a line that is no JSON is kept")
	long := `{"msg":"m","servers":"` + strings.Repeat("a", 130) + `"}`
	assert.Equal(t, " m servers="+strings.Repeat("a", 120)+"…", condense(long), "long fields are cut at 120 bytes")
}
