package corpus_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/corpus"
)

func TestNormalizeDOI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"10.1145/3397271.3401032", "10.1145/3397271.3401032"},
		{"  10.1016/S1071-5819(20)30022-7 ", "10.1016/s1071-5819(20)30022-7"},
		{"https://doi.org/10.1145/1571941.1572114", "10.1145/1571941.1572114"},
		{"http://dx.doi.org/10.3115/v1/D14-1162", "10.3115/v1/d14-1162"},
		{"doi:10.1561/1500000019", "10.1561/1500000019"},
		{"DOI: 10.1561/1500000019", "10.1561/1500000019"},
		{"0.1016/0893-6080(89)90020-8", ""}, // ACM-CR's DOI missing its leading 1
		{"None", ""},
		{"", ""},
		{"10.1145", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) { assert.Equal(t, tc.want, corpus.NormalizeDOI(tc.in)) })
	}
}

func TestNormalizeArXiv(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1706.03762", "1706.03762"},
		{"1706.03762v5", "1706.03762"},
		{"arXiv:2004.04906v3", "2004.04906"},
		{"https://arxiv.org/abs/2407.18940", "2407.18940"},
		{"https://arxiv.org/pdf/2407.18940v2.pdf", "2407.18940"},
		{"cs/0112017", "cs/0112017"},
		{"hep-th/9901001v2", "hep-th/9901001"},
		{"math.CO/0309136", "math.co/0309136"},
		{"12345", ""},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) { assert.Equal(t, tc.want, corpus.NormalizeArXiv(tc.in)) })
	}
}

func TestPaperID(t *testing.T) {
	rrf := corpus.Paper{Title: "Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning Methods",
		Year: 2009, Authors: []corpus.Author{{Family: "Cormack", Given: "Gordon V."}}}
	tests := []struct {
		name string
		p    corpus.Paper
		want string
	}{
		{"DOI wins over arXiv", corpus.Paper{DOI: "https://doi.org/10.1145/ABC", ArXiv: "1706.03762"}, "10.1145/abc"},
		{"arXiv without version", corpus.Paper{ArXiv: "arXiv:1706.03762v7", Title: "Attention Is All You Need"}, "arxiv:1706.03762"},
		{"hash of title, year, first author", rrf, "h:" + corpus.Fingerprint(rrf)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, corpus.PaperID(tc.p)) })
	}

	// The hash ignores case, punctuation and accents, and depends on title,
	// year and first author family name.
	same := rrf
	same.Title = "reciprocal rank fusion outperforms CONDORCET and individual rank-learning methods."
	same.Authors = []corpus.Author{{Family: "Cormack"}, {Family: "Clarke"}}
	assert.Equal(t, corpus.PaperID(rrf), corpus.PaperID(same))
	other := rrf
	other.Year = 2010
	assert.NotEqual(t, corpus.PaperID(rrf), corpus.PaperID(other))
	other = rrf
	other.Authors = []corpus.Author{{Family: "Clarke"}}
	assert.NotEqual(t, corpus.PaperID(rrf), corpus.PaperID(other))
	assert.Regexp(t, `^h:[0-9a-f]{12}$`, corpus.PaperID(rrf))
	// Stable across runs and machines: the value is SHA-256 of
	// "reciprocal rank fusion outperforms condorcet and individual rank learning methods|2009|cormack"
	// (checked with sha256sum), first 12 hex digits.
	assert.Equal(t, "h:46818ac8d37a", corpus.PaperID(rrf))
	// Accents fold away.
	assert.Equal(t, corpus.PaperID(corpus.Paper{Title: "Büttcher", Year: 1}), corpus.PaperID(corpus.Paper{Title: "Buttcher", Year: 1}))
}

func TestMergeFillsGapsOnly(t *testing.T) {
	dst := corpus.Paper{ID: "x", Title: "Known Title", Year: 2020}
	src := corpus.Paper{ID: "y", Title: "Other Title", Year: 1999, Abstract: "An abstract.",
		Authors: []corpus.Author{{Family: "Doe"}}, Keywords: []string{"bm25"}, Pages: "1–10"}
	n := corpus.Merge(&dst, src)
	assert.Equal(t, 4, n)
	assert.Equal(t, "x", dst.ID)
	assert.Equal(t, "Known Title", dst.Title)
	assert.Equal(t, 2020, dst.Year)
	assert.Equal(t, "An abstract.", dst.Abstract)
	assert.Equal(t, []corpus.Author{{Family: "Doe"}}, dst.Authors)
	assert.Equal(t, "1–10", dst.Pages)
	assert.Zero(t, corpus.Merge(&dst, src), "merging again fills nothing")
}

func TestPaperCSLJSON(t *testing.T) {
	p := corpus.Paper{ID: "10.1145/1571941.1572114", Type: "paper-conference", Title: "Reciprocal Rank Fusion",
		Authors: []corpus.Author{{Family: "Cormack", Given: "Gordon V."}, {Literal: "TREC Team"}},
		Year:    2009, Venue: "SIGIR", DOI: "10.1145/1571941.1572114", Keywords: []string{"rank fusion", "metasearch"},
		Pages: "758–759", ArXiv: "0000.00000"}
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"10.1145/1571941.1572114","type":"paper-conference","title":"Reciprocal Rank Fusion",
		"author":[{"family":"Cormack","given":"Gordon V."},{"literal":"TREC Team"}],
		"issued":{"date-parts":[[2009]]},"container-title":"SIGIR","DOI":"10.1145/1571941.1572114",
		"keyword":"rank fusion, metasearch","arxiv":"0000.00000","page":"758–759"}`, string(b))
	var back corpus.Paper
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, p, back)

	// CSL variants found in the wild.
	var q corpus.Paper
	require.NoError(t, json.Unmarshal([]byte(`{"id":"k","title":"T","issued":{"date-parts":[["2019"]]},
		"keyword":["a, b","c"],"volume":12,"DOI":"https://doi.org/10.1/X"}`), &q))
	assert.Equal(t, 2019, q.Year)
	assert.Equal(t, []string{"a", "b", "c"}, q.Keywords)
	assert.Equal(t, "12", q.Volume)
	assert.Equal(t, "10.1/X", q.DOI, "the DOI as written, without resolver")
	require.NoError(t, json.Unmarshal([]byte(`{"id":"k","title":"T","issued":{"raw":"March 2021"}}`), &q))
	assert.Equal(t, 2021, q.Year)
}

func TestNormalizeTitle(t *testing.T) {
	for in, want := range map[string]string{
		"Attention Is All You Need!":             "attention is all you need",
		"  BERT: Pre-training of Deep\nNetworks": "bert pre training of deep networks",
		"Café — Über Naïve Bayes":                "cafe uber naive bayes",
		"ﬁne-tuning (v2)":                        "fine tuning v2",
		"":                                       "",
		"!!!":                                    "",
	} {
		assert.Equal(t, want, corpus.NormalizeTitle(in), "NormalizeTitle(%q)", in)
	}
}
