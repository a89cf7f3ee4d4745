package corpus_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

func TestReadJSONLFields(t *testing.T) {
	res := readFixture(t, "papers.jsonl")

	att := res.byKey(t, "vaswani2017")
	data, err := os.ReadFile(fixture("papers.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	var want bytes.Buffer
	require.NoError(t, json.Compact(&want, []byte(lines[0])))
	assert.Equal(t, want.String(), string(att.Item), "the item as read, compacted")
	att.Item = nil
	assert.Equal(t, corpus.Record{
		Paper: corpus.Paper{
			ID: "arxiv:1706.03762", Type: "paper-conference", Title: "Attention Is All You Need",
			Authors: []corpus.Author{{Family: "Vaswani", Given: "Ashish"}}, Year: 2017,
			Venue: "NeurIPS", ArXiv: "1706.03762",
		},
		Key: "vaswani2017", File: fixture("papers.jsonl"), Line: 1, Kind: "paper-conference", Ref: "vaswani2017",
	}, att)

	hinton := res.byKey(t, "hinton2020")
	assert.Equal(t, "10.1145/3397271.3402425", hinton.Paper.ID)
	assert.Equal(t, 2020, hinton.Paper.Year)
	assert.Equal(t, []string{"neural networks", "deep learning"}, hinton.Paper.Keywords)

	who := res.byKey(t, "42")
	assert.Equal(t, "article-journal", who.Kind, "Kind is the type lower-cased")
	assert.Equal(t, "7", who.Paper.Volume)
	assert.Equal(t, 1999, who.Paper.Year)
	assert.Equal(t, []corpus.Author{{Literal: "World Health Organization"}}, who.Paper.Authors)
	assert.Equal(t, "h:"+corpus.Fingerprint(who.Paper), who.Paper.ID)
}

func TestReadCSLJSONFields(t *testing.T) {
	res := readFixture(t, "papers.json")
	a1 := res.byKey(t, "a1")
	assert.Equal(t, "10.1000/xyz.1", a1.Paper.ID)
	assert.Equal(t, "article-journal", a1.Kind)
	a4 := res.byKey(t, "a4")
	assert.Equal(t, 2011, a4.Paper.Year)
	assert.Equal(t, "chapter", a4.Paper.Type)

	solo := readFixture(t, "single.json").byKey(t, "solo")
	assert.Equal(t, "https://example.org/solo", solo.Paper.URL)
	assert.Equal(t, "webpage", solo.Kind)
}

func TestReadJSONSnippets(t *testing.T) {
	type reader func(ctx context.Context, r *strings.Reader, name string, emit func(corpus.Record) error, onErr func(*corpus.ParseError)) error
	jsonl := func(ctx context.Context, r *strings.Reader, name string, emit func(corpus.Record) error, onErr func(*corpus.ParseError)) error {
		return corpus.ReadJSONL(ctx, r, name, emit, onErr)
	}
	csl := func(ctx context.Context, r *strings.Reader, name string, emit func(corpus.Record) error, onErr func(*corpus.ParseError)) error {
		return corpus.ReadCSLJSON(ctx, r, name, emit, onErr)
	}
	long := strings.Repeat("word ", 40000)
	tests := []struct {
		name     string
		read     reader
		in       string
		keys     []string
		errLines []int
		errIs    error
	}{
		{"jsonl empty", jsonl, "", nil, nil, nil},
		{"jsonl blank lines", jsonl, "\n\n  \n{\"id\":\"a\",\"title\":\"A\"}\n\n", []string{"a"}, nil, nil},
		{"jsonl no final newline", jsonl, "{\"id\":\"a\",\"title\":\"A\"}\n{\"id\":\"b\",\"title\":\"B\"}", []string{"a", "b"}, nil, nil},
		{"jsonl CRLF and BOM", jsonl, "\uFEFF{\"id\":\"a\",\"title\":\"A\"}\r\n{\"id\":\"b\",\"title\":\"B\"}\r\n", []string{"a", "b"}, nil, nil},
		{"jsonl long line", jsonl, "{\"id\":\"a\",\"title\":\"A\",\"abstract\":\"" + long + "\"}\n{\"id\":\"b\",\"title\":\"B\"}", []string{"a", "b"}, nil, nil},
		{"jsonl null", jsonl, "null\n{\"id\":\"b\",\"title\":\"B\"}", []string{"b"}, []int{1}, corpus.ErrSyntax},
		{"jsonl string", jsonl, "\"x\"\n{\"id\":\"b\",\"title\":\"B\"}", []string{"b"}, []int{1}, corpus.ErrSyntax},
		{"jsonl trailing garbage", jsonl, "{\"id\":\"a\",\"title\":\"A\"} x\n", nil, []int{1}, corpus.ErrSyntax},
		{"jsonl bad issued", jsonl, "{\"id\":\"a\",\"title\":\"A\",\"issued\":2020}", nil, []int{1}, corpus.ErrBadField},
		{"jsonl bad keyword", jsonl, "{\"id\":\"a\",\"title\":\"A\",\"keyword\":{}}", nil, []int{1}, corpus.ErrBadField},
		{"jsonl bad DOI type", jsonl, "{\"id\":\"a\",\"title\":\"A\",\"DOI\":true}", nil, []int{1}, corpus.ErrBadField},
		{"jsonl invalid UTF-8", jsonl, "{\"id\":\"a\",\"title\":\"Caf\xe9\"}", []string{"a"}, nil, nil},
		{"json empty", csl, "  ", nil, nil, nil},
		{"json empty array", csl, "[]", nil, nil, nil},
		{"json objects one after another", csl, "{\"id\":\"a\",\"title\":\"A\"}\n{\"id\":\"b\",\"title\":\"B\"}", []string{"a", "b"}, nil, nil},
		{"json not array", csl, "\n42", nil, []int{2}, corpus.ErrSyntax},
		{"json truncated", csl, "[\n{\"id\":\"a\",\"title\":\"A\"},\n{\"id\":\"b\",", []string{"a"}, []int{3}, corpus.ErrSyntax},
		{"json missing bracket", csl, "[\n{\"id\":\"a\",\"title\":\"A\"}\n", []string{"a"}, []int{3}, corpus.ErrSyntax},
		{"json non-object element", csl, "[1, {\"id\":\"a\",\"title\":\"A\"}, [2]]", []string{"a"}, []int{1, 1}, corpus.ErrSyntax},
		{"json trailing data", csl, "[{\"id\":\"a\",\"title\":\"A\"}]\n\nx", []string{"a"}, []int{3}, corpus.ErrSyntax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var res readResult
			err := tc.read(t.Context(), strings.NewReader(tc.in), "in.json", func(r corpus.Record) error {
				res.recs = append(res.recs, r)
				return nil
			}, func(pe *corpus.ParseError) { res.errs = append(res.errs, pe) })
			require.NoError(t, err)
			assert.Equal(t, tc.keys, res.keys())
			assert.Equal(t, tc.errLines, res.errLines(), "errors: %v", res.errs)
			for _, e := range res.errs {
				assert.ErrorIs(t, e, tc.errIs)
			}
		})
	}
}

func TestReadJSONEmitError(t *testing.T) {
	for _, name := range []string{"papers.jsonl", "papers.json"} {
		t.Run(name, func(t *testing.T) {
			stop := errors.New("stop")
			n := 0
			err := corpus.ReadFile(t.Context(), fixture(name), func(corpus.Record) error {
				n++
				return stop
			}, nil)
			require.ErrorIs(t, err, stop)
			assert.Equal(t, 1, n)
		})
	}
}

// FuzzReadJSONL checks that no input makes the JSON readers panic.
func FuzzReadJSONL(f *testing.F) {
	for _, pat := range []string{"*.jsonl", "*.json"} {
		seeds, _ := filepath.Glob(filepath.Join("testdata", "readers", pat))
		for _, s := range seeds {
			if b, err := os.ReadFile(s); err == nil {
				f.Add(b)
			}
		}
	}
	f.Add([]byte(`{"id":1,"title":2,"author":[{"family":3}],"issued":{"date-parts":[["x"]]},"keyword":[1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'}) + 1
		check := func(pe *corpus.ParseError) {
			if pe.Line < 1 || pe.Line > lines {
				t.Errorf("error line %d outside 1..%d: %v", pe.Line, lines, pe)
			}
		}
		emit := func(r corpus.Record) error {
			if r.Line < 1 || r.Line > lines || r.Paper.ID == "" {
				t.Errorf("bad record %+v", r)
			}
			return nil
		}
		if err := corpus.ReadJSONL(context.Background(), bytes.NewReader(data), "fuzz.jsonl", emit, check); err != nil {
			t.Errorf("ReadJSONL: %v", err)
		}
		if err := corpus.ReadCSLJSON(context.Background(), bytes.NewReader(data), "fuzz.json", emit, check); err != nil {
			t.Errorf("ReadCSLJSON: %v", err)
		}
	})
}
