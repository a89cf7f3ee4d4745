package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/cite"
)

func TestCiteCommand(t *testing.T) {
	db := t.TempDir()
	_, _, err := cli(t, "", "index", "--db", db, "--quiet", samplePath(t))
	require.NoError(t, err)

	draft := "Fusion works [[cite:cormack2009rrf]]; see also ⟦cite:10.1145/1571941.1572114⟧.\n"
	out, _, err := cli(t, draft, "cite", "--db", db, "--style", "ieee", "-")
	require.NoError(t, err)
	assert.Contains(t, out, "Fusion works <!--cite:cormack2009rrf-->[1]<!--/cite-->; see also <!--cite:10.1145/1571941.1572114-->[1]<!--/cite-->.")
	assert.Contains(t, out, "[1] G. V. Cormack")
	again, _, err := cli(t, out, "cite", "--db", db, "--style", "ieee", "-")
	require.NoError(t, err)
	assert.Equal(t, out, again, "idempotent")

	// Unknown IDs: every one listed with line:col; --lenient marks them.
	_, _, err = cli(t, "a [[cite:nope]]\n[[cite:cormack2009rrf,gone]]\n", "cite", "--db", db, "-")
	require.ErrorIs(t, err, cite.ErrUnknownID)
	assert.Contains(t, err.Error(), "1:10: nope")
	assert.Contains(t, err.Error(), "2:23: gone")
	out, stderr, err := cli(t, "a [[cite:nope]]\n", "cite", "--db", db, "--lenient", "--format", "text", "-")
	require.NoError(t, err)
	assert.Equal(t, "a ⚠[[cite:nope]]\n", out)
	assert.Contains(t, stderr, "not in the store")

	// Malformed placeholder.
	_, _, err = cli(t, "x [[cite:a,]]", "cite", "--db", db, "-")
	require.ErrorIs(t, err, cite.ErrSyntax)

	// Bibliography export, by extension.
	dir := t.TempDir()
	for _, ext := range []string{".bib", ".json", ".md", ".txt"} {
		_, _, err = cli(t, draft, "cite", "--db", db, "--bib-out", filepath.Join(dir, "refs"+ext), "-")
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(dir, "refs"+ext))
		require.NoError(t, err)
		assert.Contains(t, string(b), "Cormack", ext)
	}

	// Two drafts with their own numbering merge into one.
	a := filepath.Join(dir, "a.md")
	b := filepath.Join(dir, "b.md")
	require.NoError(t, os.WriteFile(a, []byte("A [1].\n\n[1]: cite:cormack2009rrf\n"), 0o644))
	require.NoError(t, os.WriteFile(b, []byte("B [1].\n\n[1]: cite:cormack2009rrf\n"), 0o644))
	out, _, err = cli(t, "", "cite", "--db", db, "--style", "vancouver", "--format", "text", a, b)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(out, "A (1).\n\nB (1).\n\nReferences\n\n1. Cormack GV"), out)

	_, _, err = cli(t, draft, "cite", "--db", db, "--style", "nope", "-")
	require.ErrorIs(t, err, cite.ErrUnknownStyle)

	// --timeout: a deadline that has passed before rendering starts stops
	// it with an error that names the flag; a negative one is refused.
	_, _, err = cli(t, draft, "cite", "--db", db, "--timeout", "1ns", "--no-track", "-")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "style apa: rendering did not finish within --timeout 1ns")
	_, _, err = cli(t, draft, "cite", "--db", db, "--timeout", "-1s", "-")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--timeout must not be negative")
	out, _, err = cli(t, draft, "cite", "--db", db, "--timeout", "5m", "--no-track", "--style", "ieee", "-")
	require.NoError(t, err)
	assert.Contains(t, out, "[1] G. V. Cormack")
}
