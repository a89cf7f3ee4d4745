package mcp_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/build"
	"github.com/citefind/citefind/engine"
	"github.com/citefind/citefind/server/mcp"
)

// TestHostileIDsThroughTools: papers whose DOIs and keys hold characters
// of the citation syntax (",", "|", quotes, brackets, "..") are indexed,
// found by search_citations, cited by add_citation, and the placeholders
// add_citation returns resolve_citations resolves, every one (issue 13:
// `10.5555/a,b|c` came back as three unknown IDs).
func TestHostileIDsThroughTools(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	chars := []rune(`ab,|"[]⟦⟧{}#?<>^.%`)
	var bib strings.Builder
	type paper struct{ word, doi, key string }
	var papers []paper
	for i := range 12 {
		var d strings.Builder
		for range 3 + r.IntN(6) {
			d.WriteRune(chars[r.IntN(len(chars))])
		}
		p := paper{word: fmt.Sprintf("zq%dword", i), doi: "10.5555/" + d.String(), key: fmt.Sprintf("k%d|x[%d]", i, r.IntN(100))}
		if i%4 == 0 {
			p.doi = fmt.Sprintf("10.1234/../../%d/healthz", i)
		}
		papers = append(papers, p)
		// The DOI in braces (BibTeX field values may hold any of these).
		fmt.Fprintf(&bib, "@article{%s,\n  title = {A study of %s},\n  author = {Doe, Jane},\n  year = {2020},\n  doi = {%s}\n}\n\n",
			p.key, p.word, strings.NewReplacer("{", "", "}", "", "#", "").Replace(p.doi))
	}
	file := filepath.Join(t.TempDir(), "hostile.bib")
	require.NoError(t, os.WriteFile(file, []byte(bib.String()), 0o644))
	dir := t.TempDir()
	rep, err := build.Ensure(t.Context(), dir, build.EnsureOptions{Files: []string{file}})
	require.NoError(t, err)
	require.Empty(t, rep.Ingest.Errors)
	require.Equal(t, len(papers), rep.Papers)
	eng, err := engine.Open(t.Context(), dir, engine.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { eng.Close() })
	tools := mcp.New(eng, patient(mcp.Options{}))
	cs := overStdio(t, eng, tools)(t)

	var placeholders []string
	for _, p := range papers {
		res, _ := call(t, cs, "search_citations", map[string]any{"text": "a study of " + p.word, "k": 1})
		require.False(t, res.IsError)
		var found mcp.SearchOutput
		structured(t, res, &found)
		require.Len(t, found.Candidates, 1, p.word)
		res, text := call(t, cs, "add_citation", map[string]any{"id": found.Candidates[0].ID, "reason": "it is the study"})
		require.False(t, res.IsError, text)
		var added mcp.AddOutput
		structured(t, res, &added)
		placeholders = append(placeholders, added.Placeholder)
	}
	draft := "Studies " + strings.Join(placeholders, " and ") + "."
	res, text := call(t, cs, "resolve_citations", map[string]any{"draft": draft, "style": "ieee", "format": "text"})
	require.False(t, res.IsError, text)
	var resolved struct {
		Text         string `json:"text"`
		Bibliography *struct {
			Entries []string `json:"entries"`
		} `json:"bibliography"`
	}
	structured(t, res, &resolved)
	require.NotNil(t, resolved.Bibliography)
	assert.Len(t, resolved.Bibliography.Entries, len(papers), "every placeholder resolved to its own paper")
	assert.NotContains(t, resolved.Text, "[[cite:")
}
