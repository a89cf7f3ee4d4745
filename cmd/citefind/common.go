package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/retrieve/sparse"
)

// dbFlag registers --db with its documented default.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", citefind.DefaultDBDir(), "database `DIR` (env CITEFIND_DB)")
}

// bm25Flags are the BM25 ranking parameters, for experiments and tuning.
type bm25Flags struct {
	k1, b   float64
	k3      float64
	weights string
}

func (f *bm25Flags) register(fs *flag.FlagSet) {
	fs.Float64Var(&f.k1, "bm25-k1", 0, "BM25 k1 (0 = default)")
	fs.Float64Var(&f.b, "bm25-b", 0, "BM25 b in (0, 1] (0 = default)")
	fs.Float64Var(&f.k3, "bm25-k3", 0, "BM25 query-term saturation k3 (0 = none: a repeated query term counts each time)")
	fs.StringVar(&f.weights, "field-weights", "", "BM25 field weights, e.g. `text=1,title=0.5` (empty = default)")
}

func (f *bm25Flags) options() (sparse.Options, error) {
	o := sparse.Options{K1: f.k1, B: f.b, K3: f.k3}
	if f.weights != "" {
		o.FieldWeights = map[string]float64{}
		for _, kv := range strings.Split(f.weights, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			w, err := strconv.ParseFloat(v, 64)
			if !ok || err != nil || w < 0 {
				return o, usageErr("--field-weights: %q is not FIELD=WEIGHT with a weight >= 0", kv)
			}
			o.FieldWeights[k] = w
		}
	}
	return o, nil
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
