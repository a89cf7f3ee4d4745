package citefind

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/fuse"
	"github.com/citefind/citefind/internal/atomicfile"
)

// FusionFile is the file in the database folder that holds the default
// retrievers, fusion method and weights of the database's queries.
const FusionFile = "fusion.json"

const fusionFormat = 1

// FusionConfig is a database's default retrieval pipeline: which
// retrievers run and how their lists are fused. It is chosen by
// measurement (eval --sweep-weights --save-weights) and stored with the
// index, tied to the embedder the dense index was built with.
type FusionConfig struct {
	Format     int                `json:"format"`
	Embedder   string             `json:"embedder"` // the embedder the weights were measured with
	Retrievers []string           `json:"retrievers"`
	Method     fuse.Method        `json:"method"`
	Weights    map[string]float64 `json:"weights"`
	// Source says where the weights come from (a measurement, or the
	// built-in default of the embedder).
	Source string `json:"source"`
	// Delta is the measured gain over the first retriever alone, by topic
	// set and metric, when the weights come from a sweep.
	Delta map[string]map[string]float64 `json:"delta,omitempty"`
}

// ReadFusionConfig reads the database's fusion defaults; (nil, nil) when
// it has none.
func ReadFusionConfig(dir string) (*FusionConfig, error) {
	path := filepath.Join(dir, FusionFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c FusionConfig
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it, or run `citefind index` to write the default)", path, err)
	}
	if c.Format != fusionFormat {
		return nil, fmt.Errorf("%s: format %d, want %d (delete it, or run `citefind index` to write the default)", path, c.Format, fusionFormat)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

func (c *FusionConfig) validate() error {
	if len(c.Retrievers) == 0 {
		return errors.New("no retrievers")
	}
	if err := checkRetrievers(c.Retrievers); err != nil {
		return err
	}
	switch c.Method {
	case fuse.RRF, fuse.MaxNorm, fuse.MinMax:
	default:
		return fmt.Errorf("unknown fusion method %q", c.Method)
	}
	for n, w := range c.Weights {
		if w < 0 {
			return fmt.Errorf("negative weight %v for %s", w, n)
		}
	}
	return nil
}

// SaveFusionConfig stores cfg as the database's fusion defaults, recording
// the database's embedder in it.
func SaveFusionConfig(ctx context.Context, dir string, st *corpus.Store, cfg FusionConfig) error {
	spec, err := RecordedEmbedder(ctx, st)
	if err != nil {
		return err
	}
	cfg.Format = fusionFormat
	cfg.Embedder = spec
	if slices.Contains(cfg.Retrievers, RetrieverDense) && spec == EmbedderNone {
		return fmt.Errorf("the fusion uses the dense retriever, but the database %s has no embedder", dir)
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, FusionFile), append(b, '\n'), 0o644)
}

// BuiltinFusion returns the fusion defaults citefind ships for a database
// whose embedder is spec (EmbedderNone, EmbedderBuiltin or
// "ollama:MODEL"), chosen by eval --sweep-weights on ACM-CR
// (docs/benchmarks.md):
//
//   - no embedder: bm25 + rm3 (0.2) + citing (0.5), min-max fusion;
//   - builtin (LSA): the same + dense 0.05;
//   - an Ollama model: the same + dense 0.3, not measured here (no model
//     weights are available to us); the weight the measurement of
//     a sentence encoder found best. Run eval --sweep-weights
//     --save-weights on a benchmark of your field to choose your own.
func BuiltinFusion(spec string) FusionConfig {
	c := FusionConfig{
		Format:     fusionFormat,
		Embedder:   spec,
		Retrievers: []string{RetrieverBM25, RetrieverRM3, RetrieverCiting},
		Method:     fuse.MinMax,
		Weights:    map[string]float64{RetrieverBM25: 1, RetrieverRM3: 0.2, RetrieverCiting: 0.5},
		Source:     "built-in default, measured on ACM-CR (eval --sweep-weights)",
	}
	switch {
	case spec == EmbedderBuiltin:
		c.Retrievers = append(c.Retrievers, RetrieverDense)
		c.Weights[RetrieverDense] = 0.05
	case spec != EmbedderNone && spec != "":
		c.Retrievers = append(c.Retrievers, RetrieverDense)
		c.Weights[RetrieverDense] = 0.3
		c.Source = "built-in default for Ollama embedders, not measured with this model (run `citefind eval --sweep-weights --save-weights` to measure)"
	}
	return c
}

// EnsureFusionDefaults writes BuiltinFusion of the database's embedder
// when the database has no fusion defaults, has unreadable ones, or has
// defaults measured with another embedder. It returns a warning when it
// replaced a file ("" otherwise), naming what was replaced and why.
func EnsureFusionDefaults(ctx context.Context, dir string, st *corpus.Store) (string, error) {
	spec, err := RecordedEmbedder(ctx, st)
	if err != nil {
		return "", err
	}
	cur, rerr := ReadFusionConfig(dir)
	var warning string
	switch {
	case rerr != nil:
		warning = fmt.Sprintf("%v: replaced by the built-in fusion defaults for the %s embedder", rerr, spec)
	case cur == nil:
	case cur.Embedder == spec:
		return "", nil
	case spec == EmbedderNone && !slices.Contains(cur.Retrievers, RetrieverDense):
		return "", nil
	default:
		warning = fmt.Sprintf("%s: the fusion defaults (%s) were for the %s embedder; replaced by the built-in defaults for %s (run `citefind eval --sweep-weights --save-weights` to measure your own)",
			filepath.Join(dir, FusionFile), cur.Source, cur.Embedder, spec)
	}
	return warning, SaveFusionConfig(ctx, dir, st, BuiltinFusion(spec))
}
