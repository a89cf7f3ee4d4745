// Package lsa is an offline embedder trained on the corpus itself: Latent
// Semantic Analysis, the truncated SVD of the documents × terms tf-idf
// matrix. It needs no server and no model download; on two cores, training
// 256 dimensions on the ACM-CR collection (108,682 papers) and embedding
// every paper takes well under a minute.
//
// Texts are tokenised with the BM25 index's analyzer (sparse.Analyze), so
// the lexical and the latent views of a query agree on what its terms are.
// Documents are weighted (1 + ln tf) · ln(N/df) over a vocabulary filtered
// by document frequency, rows L2-normalised; the model keeps the top-k right
// singular vectors V_k and singular values Σ_k, computed by randomized SVD
// with power iterations. Embed folds a text in (x·V_k, optionally scaled by
// Σ_k⁻¹, see Fold) and L2-normalises it, so cosine similarity is a dot
// product. A Model satisfies the dense package's Embedder interface
// (Model, Dim, Embed) and is safe for concurrent use.
//
//	papers := func(yield func(string) bool) {
//		for _, p := range list {
//			if !yield(lsa.Text(p)) {
//				return
//			}
//		}
//	}
//	m, err := lsa.Train(ctx, papers, lsa.Options{}, nil) // 256 dimensions
//	if err != nil { … }
//	vecs, err := m.Embed(ctx, []string{"sparse retrieval with learned term weights"})
//	fmt.Println(m.Model(), m.Dim(), len(vecs[0])) // lsa-256@<12 hex digits> 256 256
//
//	err = m.Save(f)          // compact binary file with checksum
//	m2, err := lsa.Load(f)   // m2.Model() == m.Model()
//
// Model identities ("lsa-256@<hash>") hash the whole model, so vectors of
// two different models never share an embedding cache.
package lsa
