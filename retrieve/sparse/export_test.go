package sparse

// PostingsCacheSize returns the number of postings lists r keeps and
// their bytes (tests).
func PostingsCacheSize(r *Retriever) (int, int64) { return r.cache.size() }
