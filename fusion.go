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
	path := filepath.Join(dir, FusionFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
