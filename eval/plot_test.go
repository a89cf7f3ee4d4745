package eval_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/eval"
)

// plotResults are two stages of a small topic set with per-query ranks.
func plotResults() (*eval.Result, *eval.Result) {
	q := func(id string, rel int, ranks []int, ndcg float64) eval.QueryResult {
		return eval.QueryResult{ID: id, Relevant: rel, Ranks: ranks, Metrics: eval.Metrics{eval.NDCG10: ndcg}}
	}
	a := &eval.Result{Bench: "t", Set: "s", Stage: "bm25", Queries: 3, PerQuery: []eval.QueryResult{
		q("q1", 2, []int{1, 40}, 0.6), q("q2", 1, nil, 0), q("q3", 1, []int{3}, 0.5)}}
	b := &eval.Result{Bench: "t", Set: "s", Stage: "fused", Queries: 3, PerQuery: []eval.QueryResult{
		q("q1", 2, []int{1, 2}, 1), q("q2", 1, []int{7}, 0.33), q("q3", 1, []int{5}, 0.39)}}
	return a, b
}

func TestRecallCurve(t *testing.T) {
	a, _ := plotResults()
	c := eval.RecallCurve(a, 100)
	require.Len(t, c, 100)
	// K=1: q1 1/2 → 0.5/3; K=3: + q3 (1) → 1.5/3; K=40: q1 2/2 → 2/3
	assert.InDelta(t, 0.5/3, c[0], 1e-12)
	assert.InDelta(t, 0.5/3, c[1], 1e-12)
	assert.InDelta(t, 1.5/3, c[2], 1e-12)
	assert.InDelta(t, 1.5/3, c[38], 1e-12)
	assert.InDelta(t, 2.0/3, c[39], 1e-12)
	assert.InDelta(t, 2.0/3, c[99], 1e-12)
}

// Smoke test: the figures are written, the PNG decodes at the figure size,
// the SVG is an SVG document.
func TestPlotsSmoke(t *testing.T) {
	a, b := plotResults()
	dir := t.TempDir()
	p, err := eval.PlotRecallCurves("recall@K, t:s", []eval.Curve{{Label: "bm25", Result: a}, {Label: "fused", Result: b}}, 100)
	require.NoError(t, err)
	pngPath, svgPath, err := eval.SaveFigure(p, filepath.Join(dir, "recall"))
	require.NoError(t, err)
	checkPNG(t, pngPath)
	svg, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	assert.Contains(t, string(svg), "<svg")
	assert.Contains(t, string(svg), "fused", "legend")

	wl, err := eval.PlotWinLoss("fused − bm25", a, b, eval.NDCG10)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(wl.Title.Text, "2 wins, 0 ties, 1 losses of 3 queries"), wl.Title.Text)
	pngPath, _, err = eval.SaveFigure(wl, filepath.Join(dir, "winloss"))
	require.NoError(t, err)
	checkPNG(t, pngPath)

	_, err = eval.PlotWinLoss("x", a, &eval.Result{}, eval.NDCG10)
	require.ErrorIs(t, err, eval.ErrNoPairs)
}

func checkPNG(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(b))
	require.NoError(t, err)
	// 6 × 4 inches at gonum/plot's default 96 dpi
	assert.Equal(t, 576, img.Bounds().Dx())
	assert.Equal(t, 384, img.Bounds().Dy())
	// not blank: some pixel differs from the corner
	c0 := img.At(0, 0)
	differs := false
	for y := 0; y < img.Bounds().Dy() && !differs; y += 7 {
		for x := 0; x < img.Bounds().Dx(); x += 7 {
			if img.At(x, y) != c0 {
				differs = true
				break
			}
		}
	}
	assert.True(t, differs, "the image is not blank")
}

// The report of two runs: tables, comparison, figures written and linked.
func TestWriteReportTwoRuns(t *testing.T) {
	a, b := plotResults()
	b.Stage = "bm25"
	dir := t.TempDir()
	runs := []*eval.RunFile{{Label: "textbook", Results: []*eval.Result{a}}, {Label: "tuned", Results: []*eval.Result{b}}}
	var out bytes.Buffer
	require.NoError(t, eval.WriteReport(&out, runs, eval.ReportOptions{FigureDir: dir, Prefix: "rep"}))
	s := out.String()
	assert.Contains(t, s, "- **textbook (A)**")
	assert.Contains(t, s, "| textbook/bm25 | 3 |")
	assert.Contains(t, s, "**textbook/bm25** (A) against **tuned/bm25** (B), 3 paired queries")
	assert.Contains(t, s, "![recall@K for K = 1…100, t:s](rep-t-s-recall.png) ([SVG](rep-t-s-recall.svg))")
	assert.Contains(t, s, "(rep-t-s-winloss-tuned-bm25-vs-textbook-bm25.png)")
	for _, f := range []string{"rep-t-s-recall.png", "rep-t-s-recall.svg", "rep-t-s-winloss-tuned-bm25-vs-textbook-bm25.png", "rep-t-s-winloss-tuned-bm25-vs-textbook-bm25.svg"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	checkPNG(t, filepath.Join(dir, "rep-t-s-recall.png"))

	var again bytes.Buffer
	require.NoError(t, eval.WriteReport(&again, runs, eval.ReportOptions{}))
	assert.NotContains(t, again.String(), "![")
	require.Error(t, eval.WriteReport(&again, nil, eval.ReportOptions{}))
}
