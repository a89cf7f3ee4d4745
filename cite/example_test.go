package cite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/corpus"
)

// A writer's draft cites papers by ID or BibTeX key; Resolve numbers them
// by first appearance (IEEE), writes the citations in place and appends
// the bibliography. The paper store is the Lookup.
func ExampleResolve() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "cite")
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
  booktitle = {Proceedings of the 32nd International ACM SIGIR Conference on Research and Development in Information Retrieval},
  pages = {758--759},
  year = {2009},
  doi = {10.1145/1571941.1572114}
}
@article{robertson2009bm25,
  title = {The Probabilistic Relevance Framework: BM25 and Beyond},
  author = {Robertson, Stephen and Zaragoza, Hugo},
  journal = {Foundations and Trends in Information Retrieval},
  volume = {3}, number = {4}, pages = {333--389},
  year = {2009},
  doi = {10.1561/1500000019}
}`
	_ = corpus.ReadBibTeX(ctx, strings.NewReader(bib), "refs.bib", func(r corpus.Record) error {
		recs = append(recs, r)
		return nil
	}, nil)
	if _, err := st.Ingest(ctx, recs); err != nil {
		panic(err)
	}

	draft := "BM25 [[cite:robertson2009bm25]] and its fusion with other rankings [[cite:cormack2009rrf,robertson2009bm25]] remain strong baselines."
	res, err := cite.Resolve(ctx, draft, st, cite.Options{Style: cite.IEEE, Format: cite.Text})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text)
	// Output:
	// BM25 [1] and its fusion with other rankings [1], [2] remain strong baselines.
	//
	// References
	//
	// [1] S. Robertson and H. Zaragoza, “The probabilistic relevance framework: BM25 and beyond,” Foundations and Trends in Information Retrieval, vol. 3, no. 4, pp. 333–389, 2009, doi: 10.1561/1500000019.
	//
	// [2] G. V. Cormack, C. L. A. Clarke, and S. Buettcher, “Reciprocal rank fusion outperforms condorcet and individual rank learning methods,” in Proceedings of the 32nd international ACM SIGIR conference on research and development in information retrieval, 2009, pp. 758–759. doi: 10.1145/1571941.1572114.
}
