package main

import (
	"flag"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind"
)

// TestFlagHelp: each flag of each command's --help shows a placeholder
// that is a name in capitals or a type, never words taken from its
// description (the flag package takes the first `…` of a usage string as
// the placeholder: "-retrievers citefind status" was one).
func TestFlagHelp(t *testing.T) {
	flagLine := regexp.MustCompile(`^  -([a-z0-9-]+)(?: (.*))?$`)
	placeholder := regexp.MustCompile(`^([A-Z][A-Z0-9_:]*|string|int|int64|uint|float|duration|value)$`)
	for _, c := range commands(env{}) {
		t.Run(c.Name(), func(t *testing.T) {
			_, stderr, err := cli(t, "", c.Name(), "--help")
			require.ErrorIs(t, err, flag.ErrHelp)
			n := 0
			for _, line := range strings.Split(stderr, "\n") {
				m := flagLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				n++
				if m[2] != "" {
					assert.Regexp(t, placeholder, m[2], "-%s", m[1])
				}
			}
			assert.Positive(t, n, "flags listed")
		})
	}
}

// TestQueryUsage: the usage line and the help of query name every
// retriever, and -k's help says how the limits differ between the
// command line, the API and MCP.
func TestQueryUsage(t *testing.T) {
	_, stderr, err := cli(t, "", "query", "--help")
	require.ErrorIs(t, err, flag.ErrHelp)
	usage, _, _ := strings.Cut(stderr, "\n\n")
	for _, r := range citefind.RetrieverNames {
		assert.Contains(t, usage, r, "the usage line names retriever %s", r)
	}
	assert.Contains(t, stderr, "-retrievers LIST")
	assert.Contains(t, stderr, "no upper limit here; the HTTP API allows 1-100, MCP 1-50")
}
