package eval

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// CurveDepth is the deepest rank of the recall curves in reports.
const CurveDepth = 100

// Figure size of the report figures.
const (
	FigureWidth  = 6 * vg.Inch
	FigureHeight = 4 * vg.Inch
)

// RecallCurve returns recall@K of res for K = 1…maxK (element K−1),
// macro-averaged over its queries as Score computes recall: the relevant
// items retrieved at rank ≤ K over all relevant items of the query,
// missing ones included. Failed queries count 0. Ranks deeper than the
// depth retrieved are not known, so the curve is flat beyond it.
func RecallCurve(res *Result, maxK int) []float64 {
	out := make([]float64, maxK)
	if len(res.PerQuery) == 0 {
		return out
	}
	for _, q := range res.PerQuery {
		if q.Relevant == 0 || q.Err != "" {
			continue
		}
		for _, r := range q.Ranks {
			if r < 1 || r > maxK {
				continue
			}
			// the item counts at every K ≥ r
			w := 1 / float64(q.Relevant)
			for k := r - 1; k < maxK; k++ {
				out[k] += w
			}
		}
	}
	for k := range out {
		out[k] /= float64(len(res.PerQuery))
	}
	return out
}

// Curve is one line of a recall plot.
type Curve struct {
	Label  string
	Result *Result
}

// PlotRecallCurves draws recall@K for K = 1…maxK, one line per curve,
// with K on a logarithmic axis.
func PlotRecallCurves(title string, curves []Curve, maxK int) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "K (rank cut-off, log scale)"
	p.Y.Label.Text = "recall@K"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		var ts []plot.Tick
		for _, v := range []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000} {
			if v >= min && v <= max {
				ts = append(ts, plot.Tick{Value: v, Label: fmt.Sprint(v)})
			}
		}
		return ts
	})
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = 2 * vg.Millimeter
	p.Legend.YOffs = -2 * vg.Millimeter
	for i, c := range curves {
		rc := RecallCurve(c.Result, maxK)
		xys := make(plotter.XYs, maxK)
		for k := range rc {
			xys[k].X, xys[k].Y = float64(k+1), rc[k]
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(c.Label, l)
	}
	return p, nil
}

// PlotWinLoss draws the per-query difference b − a of one metric, sorted
// from the largest gain to the largest loss: a filled area above zero for
// the queries where b wins, below zero where it loses, and a count of
// wins, ties and losses in the title.
func PlotWinLoss(title string, a, b *Result, metric string) (*plot.Plot, error) {
	_, d := Differences(a, b, metric)
	if len(d) == 0 {
		return nil, ErrNoPairs
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(d)))
	wins, losses := 0, 0
	for _, x := range d {
		switch {
		case x > tieEps:
			wins++
		case x < -tieEps:
			losses++
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s\n%d wins, %d ties, %d losses of %d queries", title, wins, len(d)-wins-losses, losses, len(d))
	p.X.Label.Text = "queries, sorted by difference"
	p.Y.Label.Text = "difference in " + metric
	p.X.Min, p.X.Max = 0, float64(len(d))
	p.X.Tick.Marker = plot.TickerFunc(func(min, max float64) []plot.Tick {
		ts := plot.DefaultTicks{}.Ticks(min, max)
		for i := range ts {
			if ts[i].Label != "" {
				ts[i].Label = fmt.Sprintf("%.0f", ts[i].Value)
			}
		}
		return ts
	})
	p.Y.Min, p.Y.Max = -1, 1
	p.Add(plotter.NewGrid())
	// Step outlines: query i spans [i, i+1).
	area := func(from, to int, fill color.Color) error {
		if from >= to {
			return nil
		}
		pts := plotter.XYs{{X: float64(from), Y: 0}}
		for i := from; i < to; i++ {
			pts = append(pts, plotter.XY{X: float64(i), Y: d[i]}, plotter.XY{X: float64(i + 1), Y: d[i]})
		}
		pts = append(pts, plotter.XY{X: float64(to), Y: 0})
		poly, err := plotter.NewPolygon(pts)
		if err != nil {
			return err
		}
		poly.Color = fill
		poly.LineStyle = draw.LineStyle{Color: fill, Width: vg.Points(0.5)}
		p.Add(poly)
		return nil
	}
	if err := area(0, wins, color.RGBA{R: 0x1b, G: 0x9e, B: 0x77, A: 0xff}); err != nil {
		return nil, err
	}
	if err := area(len(d)-losses, len(d), color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff}); err != nil {
		return nil, err
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: float64(len(d)), Y: 0}})
	if err != nil {
		return nil, err
	}
	zero.Color = color.Black
	p.Add(zero)
	return p, nil
}

// SaveFigure writes p as base.png and base.svg (base is a path without
// extension) at FigureWidth × FigureHeight and returns the two paths.
func SaveFigure(p *plot.Plot, base string) (png, svg string, err error) {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return "", "", err
	}
	png, svg = base+".png", base+".svg"
	for _, f := range []string{png, svg} {
		if err := p.Save(FigureWidth, FigureHeight, f); err != nil {
			return "", "", fmt.Errorf("write figure %s: %w", f, err)
		}
	}
	return png, svg, nil
}
