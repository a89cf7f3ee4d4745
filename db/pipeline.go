package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/internal/atomicfile"
	"github.com/citefind/citefind/rerank"
)

// pipelineFormat is the current PipelineFile format; format 1 is the
// LegacyFusionFile (no reranker).
const pipelineFormat = 2

// Pipeline is a database's query pipeline: which retrievers run, how
// their lists are fused, and which reranker reorders the fused list. It
// is written by every path that creates or indexes a database (the
// built-in default for its embedder, BuiltinPipeline) or chosen by
// measurement (eval --sweep-weights --save-weights), and read by every
// path that answers from the database (query, eval, serve, mcp), so that
// they answer the same text with the same list. It is tied to the
// embedder the dense index was built with.
type Pipeline struct {
	Format     int                `json:"format"`
	Embedder   string             `json:"embedder"` // the embedder the weights were measured with
	Retrievers []string           `json:"retrievers"`
	Method     fuse.Method        `json:"method"`
	Weights    map[string]float64 `json:"weights"`
	// Rerank is the reranker queries apply by default ("" or "none":
	// none; see citefind.RerankerNames).
	Rerank string `json:"rerank,omitempty"`
	// Source says where the pipeline comes from (a measurement, or the
	// built-in default of the embedder).
	Source string `json:"source"`
	// Delta is the measured gain over the first retriever alone, by topic
	// set and metric, when the weights come from a sweep.
	Delta map[string]map[string]float64 `json:"delta,omitempty"`
}

// ReadPipeline reads the pipeline file of the database folder dir
// (PipelineFile, else the LegacyFusionFile of older databases); (nil,
// nil) when it has none.
func ReadPipeline(dir string) (*Pipeline, error) {
	for _, name := range []string{PipelineFile, LegacyFusionFile} {
		path := filepath.Join(dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var p Pipeline
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("%s: %w (delete it, or run `citefind index` to write the default)", path, err)
		}
		if want := map[string]int{PipelineFile: pipelineFormat, LegacyFusionFile: 1}[name]; p.Format != want {
			return nil, fmt.Errorf("%s: format %d, want %d (delete it, or run `citefind index` to write the default)", path, p.Format, want)
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		p.Format = pipelineFormat
		return &p, nil
	}
	return nil, nil
}

// Validate checks the retrievers, method, weights and reranker.
func (p *Pipeline) Validate() error {
	if len(p.Retrievers) == 0 {
		return errors.New("no retrievers")
	}
	if err := citefind.CheckRetrievers(p.Retrievers); err != nil {
		return err
	}
	switch p.Method {
	case fuse.RRF, fuse.MaxNorm, fuse.MinMax:
	default:
		return fmt.Errorf("unknown fusion method %q", p.Method)
	}
	for n, w := range p.Weights {
		if w < 0 {
			return fmt.Errorf("negative weight %v for %s", w, n)
		}
	}
	return citefind.CheckReranker(p.Rerank)
}

// builtinContrastSource is the Source of the contrast embedder's
// built-in pipeline; oldBuiltinSources are the Sources of earlier
// built-in pipelines, which EnsurePipeline brings up to date.
const builtinContrastSource = "built-in default for the contrast embedder with word bigrams, chosen on ACM-CR, SciFact and ScisummNet (eval --suite --sweep-weights), reranked by the learned reranker"

// oldBuiltinSources are the Sources of the built-in pipelines of earlier
// versions, which EnsurePipeline replaces by this version's.
var oldBuiltinSources = []string{
	"built-in default for the contrast embedder, chosen on ACM-CR, SciFact and ScisummNet (eval --suite --sweep-weights)",
	// dense 0.4, for the unigram embedder
	"built-in default for the contrast embedder, chosen on ACM-CR, SciFact and ScisummNet (eval --suite --sweep-weights), reranked by the learned reranker",
}

// BuiltinPipeline returns the pipeline citefind ships for a database whose
// embedder is spec (EmbedderNone, EmbedderBuiltin, EmbedderContrast or
// "ollama:MODEL"), chosen by eval --sweep-weights (docs/benchmarks.md):
//
//   - no embedder: bm25 + rm3 (0.2) + citing (0.5), min-max fusion;
//   - contrast (the default embedder): bm25 + citing (0.5) + dense (1),
//     min-max, chosen across ACM-CR, SciFact and ScisummNet, then the
//     learned reranker (its built-in model for these retrievers, trained
//     on 50 candidates a query on the three collections);
//   - builtin (LSA): bm25 + rm3 (0.2) + citing (0.5) + dense 0.05;
//   - an Ollama model: the same + dense 0.3, not measured here (no model
//     weights are available to us); the weight the measurement of
//     a sentence encoder found best. Run eval --sweep-weights
//     --save-weights on a benchmark of your field to choose your own.
//
// The other defaults have no reranker.
func BuiltinPipeline(spec string) Pipeline {
	p := Pipeline{
		Format:     pipelineFormat,
		Embedder:   spec,
		Retrievers: []string{citefind.RetrieverBM25, citefind.RetrieverRM3, citefind.RetrieverCiting},
		Method:     fuse.MinMax,
		Weights:    map[string]float64{citefind.RetrieverBM25: 1, citefind.RetrieverRM3: 0.2, citefind.RetrieverCiting: 0.5},
		Source:     "built-in default, measured on ACM-CR (eval --sweep-weights)",
	}
	switch {
	case spec == EmbedderBuiltin:
		p.Retrievers = append(p.Retrievers, citefind.RetrieverDense)
		p.Weights[citefind.RetrieverDense] = 0.05
	case spec == EmbedderContrast:
		// Chosen by eval --suite --sweep-weights on ACM-CR, SciFact and
		// ScisummNet: rm3 adds nothing held out beside dense and costs
		// most of the query time.
		p.Retrievers = []string{citefind.RetrieverBM25, citefind.RetrieverCiting, citefind.RetrieverDense}
		p.Weights = map[string]float64{citefind.RetrieverBM25: 1, citefind.RetrieverCiting: 0.5, citefind.RetrieverDense: 1}
		p.Rerank = rerank.NameLearned
		p.Source = builtinContrastSource
	case spec != EmbedderNone && spec != "":
		p.Retrievers = append(p.Retrievers, citefind.RetrieverDense)
		p.Weights[citefind.RetrieverDense] = 0.3
		p.Source = "built-in default for Ollama embedders, not measured with this model (run `citefind eval --sweep-weights --save-weights` to measure)"
	}
	return p
}

// SavePipeline stores p as the database's pipeline, recording the
// database's embedder in it, and removes a LegacyFusionFile.
func (d *DB) SavePipeline(ctx context.Context, p Pipeline) error {
	spec, err := d.Embedder(ctx)
	if err != nil {
		return err
	}
	p.Format = pipelineFormat
	p.Embedder = spec
	if slices.Contains(p.Retrievers, citefind.RetrieverDense) && spec == EmbedderNone {
		return fmt.Errorf("the pipeline uses the dense retriever, but the database %s has no embedder", d.Dir)
	}
	if err := p.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(d.Dir, PipelineFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(d.Dir, LegacyFusionFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// EnsurePipeline writes BuiltinPipeline of the database's embedder when
// the database has no pipeline file, an unreadable one, one of an older
// format, or one measured with another embedder. It returns a warning
// when it replaced a file ("" otherwise), naming what was replaced and
// why.
func (d *DB) EnsurePipeline(ctx context.Context) (string, error) {
	spec, err := d.Embedder(ctx)
	if err != nil {
		return "", err
	}
	_, errNew := os.Stat(filepath.Join(d.Dir, PipelineFile))
	cur, rerr := ReadPipeline(d.Dir)
	var warning string
	switch {
	case rerr != nil:
		warning = fmt.Sprintf("%v: replaced by the built-in pipeline for the %s embedder", rerr, spec)
	case cur == nil:
	case cur.Embedder == spec && slices.Contains(oldBuiltinSources, cur.Source):
		warning = fmt.Sprintf("%s: the built-in pipeline of an earlier citefind (%s) was replaced by this version's (%s)",
			filepath.Join(d.Dir, PipelineFile), cur.Source, BuiltinPipeline(spec).Source)
	case cur.Embedder == spec || spec == EmbedderNone && !slices.Contains(cur.Retrievers, citefind.RetrieverDense):
		if errNew == nil {
			return "", nil
		}
		// A legacy fusion.json: rewrite it as pipeline.json, unchanged.
		return "", d.SavePipeline(ctx, *cur)
	default:
		warning = fmt.Sprintf("%s: the pipeline (%s) was for the %s embedder; replaced by the built-in pipeline for %s (run `citefind eval --sweep-weights --save-weights` to measure your own)",
			filepath.Join(d.Dir, PipelineFile), cur.Source, cur.Embedder, spec)
	}
	return warning, d.SavePipeline(ctx, BuiltinPipeline(spec))
}

// QueryPipeline returns the pipeline queries of the database use: its
// pipeline file, else the built-in pipeline of its embedder. A file
// measured with another embedder than the database's is not used (the
// built-in pipeline is, with a warning); an unreadable one is an error.
func (d *DB) QueryPipeline(ctx context.Context) (p Pipeline, warnings []string, err error) {
	spec, err := d.Embedder(ctx)
	if err != nil {
		return Pipeline{}, nil, err
	}
	cur, err := ReadPipeline(d.Dir)
	if err != nil {
		return Pipeline{}, nil, err
	}
	switch {
	case cur == nil:
		p = BuiltinPipeline(spec)
		p.Source += "; no " + PipelineFile + " in the database (run `citefind index` to write it)"
		return p, nil, nil
	case slices.Contains(cur.Retrievers, citefind.RetrieverDense) && cur.Embedder != spec:
		p = BuiltinPipeline(spec)
		return p, []string{fmt.Sprintf("the database's pipeline (%s) was measured with the %s embedder, not %s: the built-in pipeline is used (run `citefind index --db %s` to reset it)", PipelineFile, cur.Embedder, spec, d.Dir)}, nil
	}
	return *cur, nil, nil
}
