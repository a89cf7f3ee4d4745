package eval_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/eval"
	"github.com/citefind/citefind/rerank/learned"
)

// TestMeasureRecipes runs, for each recipe, what make train-loco prints:
// leave-one-collection-out over every collection and the 5-fold
// cross-validation within the collections that have no test split of
// their own (Train == Test), on cached candidate datasets featurised once:
//
//	CITEFIND_MEASURE=1 CITEFIND_COLLECTIONS='acm-cr=A.json.gz|A.json.gz;scifact=TRAIN.json.gz|TEST.json.gz;…' \
//	  CITEFIND_RECIPES='base=balance;bag3=balance,bag=3;nd20=balance,ndcgat=20' \
//	  go test -run MeasureRecipes -v -timeout 5h ./eval
//
// A recipe is NAME=KEY[=VALUE],…: balance, trees, leaves, lr, minleaf,
// ndcgat, ff (feature fraction), l2, seed, bag, drop (names or prefixes
// joined by "+"). CITEFIND_RECIPES_NOCV=1 skips the cross-validation.
func TestMeasureRecipes(t *testing.T) {
	if os.Getenv("CITEFIND_MEASURE") != "1" || os.Getenv("CITEFIND_COLLECTIONS") == "" || os.Getenv("CITEFIND_RECIPES") == "" {
		t.Skip("set CITEFIND_MEASURE=1, CITEFIND_COLLECTIONS and CITEFIND_RECIPES to measure recipes")
	}
	cols := measureCollections(t)
	cache := eval.NewSampleCache()
	for _, r := range strings.Split(os.Getenv("CITEFIND_RECIPES"), ";") {
		name, spec, _ := strings.Cut(r, "=")
		o := eval.TransferOptions{Params: learned.DefaultParams(), Cache: cache}
		for _, kv := range strings.Split(spec, ",") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			num := func() float64 { f, err := strconv.ParseFloat(v, 64); require.NoError(t, err, kv); return f }
			switch {
			case k == "balance":
				o.Balance = true
			case k == "trees":
				o.Params.Trees = int(num())
			case k == "leaves":
				o.Params.Leaves = int(num())
			case k == "lr":
				o.Params.LearningRate = num()
			case k == "minleaf":
				o.Params.MinLeaf = int(num())
			case k == "ndcgat":
				o.Params.NDCGAt = int(num())
			case k == "ff":
				o.Params.FeatureFraction = num()
			case k == "l2":
				o.Params.L2 = num()
			case k == "bag":
				o.Params.Bag = int(num())
			case k == "seed":
				o.Params.Seed = uint64(num())
			case k == "drop":
				o.Params.Drop = strings.Split(v, "+")
			default:
				t.Fatalf("recipe %s: unknown key %q", name, k)
			}
		}
		held, err := eval.LeaveOneCollectionOut(t.Context(), cols, o)
		require.NoError(t, err)
		cells, worst, mean := locoSummary(held)
		var cv []string
		for i, c := range cols {
			if os.Getenv("CITEFIND_RECIPES_NOCV") != "" {
				break // leave one collection out only
			}
			sc, err := eval.CrossValidateWithin(t.Context(), cols, i, 5, 1, o)
			require.NoError(t, err)
			for _, s := range sc {
				cv = append(cv, fmt.Sprintf("%s:%s R@10 %.4f [%+.3f,%+.3f] nDCG %.4f", c.Name, s.Set, s.Reranked[eval.Recall10], s.R10Lo, s.R10Hi, s.Reranked[eval.NDCG10]))
			}
		}
		t.Logf("RECIPE %s (%s) | LOCO %s | worst %+.4f | mean %+.4f | CV %s", name, spec, strings.Join(cells, " | "), worst, mean, strings.Join(cv, " | "))
	}
}
