// Package cite turns a writer's citation placeholders into in-text
// citations and a bibliography, and never invents a reference: every cited
// ID must name a paper in the store (one batch lookup, Lookup.GetMany).
//
// Placeholders: [[cite:ID]], ⟦cite:ID⟧ (collision-free), [[cite:A,B]]
// (several papers), [[cite:PRIMARY|SECONDARY]] ("as cited in"), and
// [[cite:ID "quoted words"]] (the quote is checked against the paper's
// title and abstract, QuoteSimilarity). Placeholders in code spans and
// fenced code blocks are left alone. Malformed ones are *SyntaxError with
// line:column; unknown IDs an *UnknownIDError listing each.
//
// Styles: APA 7, IEEE, MLA 9, Chicago author-date, Harvard (Cite Them
// Right), Vancouver, in Markdown or plain text, following the CSL styles of
// those names (testdata/styles compares the fixture with pandoc's citeproc).
//
// Markdown output keeps each citation's placeholder in an invisible anchor
// (<!--cite:ID-->[1]<!--/cite-->) and the number→ID map in the
// bibliography block, so Resolve is idempotent and a document edited after
// resolution is renumbered as a whole. Merge combines drafts that carry
// their own "[n]" numbering and "[n]: cite:ID" maps.
//
// Usage tracking: DraftUsage builds the record of a resolved draft (its
// cited papers and the searches behind it) that corpus.Store.RecordUsage
// stores; Stats summarises corpus.Store.Usage: citation rate per search,
// citations per paper, papers retrieved but never cited.
//
// Usage:
//
//	store, _ := corpus.OpenStore(ctx, "papers.sqlite")
//	res, err := cite.Resolve(ctx, draft, store, cite.Options{Style: cite.IEEE})
//	// res.Text, res.Warnings, res.Bibliography.Papers
//	cite.WriteBibTeX(w, res.Bibliography.Papers, keys) // keys: the users' own, corpus.Store.Keys
package cite
