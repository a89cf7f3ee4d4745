// Package contrast is an offline embedder trained on the corpus itself,
// with no server, no download and no judgement: a linear projection of a
// text's tf-idf features to Dim dimensions, learnt contrastively from
// pairs each paper gives (its title and its abstract, its keywords and the
// rest, one sentence of its abstract and the rest).
//
// A text is tokenised (words of Unicode letters and digits, lower-cased,
// English stop words dropped, Porter-stemmed: the terms of the BM25
// index's analyzer, in a fraction of its time) and weighted
// (1 + ln tf)·idf over the training vocabulary (optionally with word
// bigrams hashed into buckets); its embedding is the L2-normalised sum of
// its features' rows. That is a fixed function of the text, so papers
// added after training are embedded without retraining, and the cosine
// of two embeddings is their dot product.
//
// Training (Train) minimises the InfoNCE loss with in-batch negatives
// (temperature 0.05, symmetric), with lazy Adam on the rows a batch
// touches. Batches can be composed so that most papers meet their hardest
// lexical negative (Options.Neighbours). The heavy arithmetic runs on
// AVX2+FMA kernels (kernel_amd64.s) when the CPU has them, portable Go
// otherwise, on Options.Workers goroutines; the result does not depend on
// the number of workers, so a seed gives the same model on one machine.
//
//	m, err := contrast.Train(ctx, papers, contrast.Options{}, nil) // papers: iter.Seq[corpus.Paper]
//	if err != nil { … }                                           // contrast.ErrTooSmall: too few papers with an abstract
//	err = contrast.SaveFile(filepath.Join(db, contrast.ModelFile), m) // atomic
//	vecs, err := m.Embed(ctx, []string{contrast.Text(paper)})       // unit vectors of m.Dim()
//	m2, err := contrast.LoadFile(path, contrast.Options{}.Spec())   // ErrCorrupt, ErrMismatch
//
// A Model satisfies the dense package's Embedder interface (Model, Dim,
// Embed) and is safe for concurrent use. Its identity,
// "contrast-<dim>@<hash>", hashes the whole model file, so vectors of two
// models never share an embedding cache entry.
//
// docs/dense.md gives the recipe, every setting measured on ACM-CR,
// SciFact and ScisummNet (TestMeasure, CITEFIND_MEASURE=1), and the costs.
package contrast
