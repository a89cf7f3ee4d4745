package corpus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// A store keeps one paper per work, whatever records it was read from:
// the second record (a BibTeX key of the same DOI) merges into the first,
// and its key becomes an alias of the paper.
func ExampleStore() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "store")
	defer os.RemoveAll(dir)
	st, err := corpus.OpenStore(ctx, filepath.Join(dir, "papers.sqlite"))
	if err != nil {
		panic(err)
	}
	defer st.Close()

	var recs []corpus.Record
	bib := `@inproceedings{cormack2009rrf,
  title = {Reciprocal Rank Fusion Outperforms Condorcet and Individual Rank Learning Methods},
  author = {Cormack, Gordon V. and Clarke, Charles L. A. and Buettcher, Stefan},
  booktitle = {Proceedings of SIGIR},
  year = {2009},
  doi = {10.1145/1571941.1572114}
}
@article{rrf-again,
  title = {Reciprocal rank fusion outperforms Condorcet and individual rank learning methods},
  author = {Cormack, G. V.},
  year = {2009},
  doi = {10.1145/1571941.1572114},
  abstract = {Reciprocal Rank Fusion, a simple method for combining the document rankings from multiple IR systems, ...}
}`
	err = corpus.ReadBibTeX(ctx, strings.NewReader(bib), "refs.bib", func(r corpus.Record) error {
		recs = append(recs, r)
		return nil
	}, nil)
	if err != nil {
		panic(err)
	}
	stats, err := st.Ingest(ctx, recs)
	if err != nil {
		panic(err)
	}
	fmt.Println("added:", stats.Added, "merged:", stats.Merged)

	p, err := st.Get(ctx, "rrf-again") // an alias names its paper
	if err != nil {
		panic(err)
	}
	fmt.Println(p.ID)
	fmt.Println(p.Title) // BibTeX titles become sentence case, as CSL data expects
	fmt.Println("abstract filled in:", p.Abstract != "")

	// The paper's CSL-JSON item, for a CSL processor: the first record's
	// item completed by the second's, "id" set to the paper ID.
	items, err := st.Items(ctx, []string{"cormack2009rrf"})
	if err != nil {
		panic(err)
	}
	var item struct {
		ID        string `json:"id"`
		Container string `json:"container-title"`
		DOI       string `json:"DOI"`
		Abstract  string `json:"abstract"`
	}
	if err := json.Unmarshal(items["cormack2009rrf"], &item); err != nil {
		panic(err)
	}
	fmt.Println(item.ID, "|", item.Container, "|", item.DOI, "|", item.Abstract != "")
	// Output:
	// added: 1 merged: 1
	// 10.1145/1571941.1572114
	// Reciprocal rank fusion outperforms condorcet and individual rank learning methods
	// abstract filled in: true
	// 10.1145/1571941.1572114 | Proceedings of SIGIR | 10.1145/1571941.1572114 | true
}
