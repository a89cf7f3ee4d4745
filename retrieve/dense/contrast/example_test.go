package contrast_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/citefind/citefind/retrieve/dense/contrast"
)

// Train an embedder on a collection's own papers, save it, load it back
// and embed a query.
func ExampleTrain() {
	ctx := context.Background()
	papers := topicPapers(64) // []corpus.Paper with titles, abstracts, keywords
	m, err := contrast.Train(ctx, slices.Values(papers), contrast.Options{
		Dim: 32, Batch: 32, MinDF: 1, MaxDFRatio: 1, Epochs: 20, MinSteps: -1, Temperature: 0.1, LR: 0.01,
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, _ := os.MkdirTemp("", "contrast")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, contrast.ModelFile)
	if err := contrast.SaveFile(path, m); err != nil {
		fmt.Println(err)
		return
	}
	m2, err := contrast.LoadFile(path, "uni+bi32768/32") // the defaults hash word bigrams too
	if err != nil {
		fmt.Println(err)
		return
	}
	vecs, _ := m2.Embed(ctx, []string{papers[5].Title, contrast.Text(papers[5]), contrast.Text(papers[6])})
	fmt.Println(m2.Spec(), len(vecs[0]), m2.Model() == m.Model())
	fmt.Println("own paper closer than another:", dot(vecs[0], vecs[1]) > dot(vecs[0], vecs[2]))
	// Output:
	// uni+bi32768/32 32 true
	// own paper closer than another: true
}
