package learned

import (
	"iter"
	"math"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/citefind/citefind/rerank"
	"github.com/citefind/citefind/retrieve"
	"github.com/citefind/citefind/retrieve/sparse"
)

// FeatureSet names the features this package computes (FeatureNames).
// A model records the feature set it was trained for, and Load refuses a
// model of another one: the same names can mean different values.
//
//   - "v1" (model format 1): raw ranks, BM25 values, lengths and years,
//     which differ in scale from one collection to another;
//   - "transfer-2": every feature normalised per query (ranks over the
//     list depth, scores min-max, z-scored and as a share of the best in
//     the query's list, overlaps as fractions, lengths relative to the
//     candidates'), no raw year, no query length: a value means the same
//     on any collection.
const FeatureSet = "transfer-2"

// missingRank is the normalised rank (rank / list length) given to a
// candidate that a retriever did not return: beyond any returned one.
const missingRank = 1.5

// prfDepth is how many top fused candidates make the pseudo-relevance
// centroid of the "prf.sim" feature.
const prfDepth = 10

// Names of the features that do not depend on the retrievers, in vector
// order. Per-retriever features come first (see FeatureNames).
var baseFeatures = []string{
	"fused.rank", "fused.rrank", "fused.minmax", "fused.z", "fused.frac",
	"title.cov", "title.idfcov", "title.qfrac", "title.bigram", "title.bm25",
	"abs.cov", "abs.idfcov", "abs.bigram", "abs.bm25",
	"kw.cov",
	"all.idfcov", "all.idfcov.z",
	"acro.title", "acro.abs",
	"author.any", "author.first",
	"title.lenr", "abs.lenr", "abs.has",
	"year.pct", "year.has",
	"venue.pool",
	"prf.sim", "prf.simr",
	"win.idfcov", "win.title", "sent.idfcov", "sent.bm25",
}

// perRetriever are the feature suffixes computed for each retriever name.
var perRetriever = []string{"found", "rank", "rrank", "minmax", "z", "ratio"}

// FeatureNames returns the names of the features computed for candidates
// fused from the given retrievers, in vector order: for each retriever r,
// r.found, r.rank, r.rrank, r.minmax, r.z, r.ratio; then the fused-list,
// text overlap, author, length, year, venue, pseudo-relevance and
// local-context features (docs/rerank.md describes each).
func FeatureNames(retrievers []string) []string {
	var out []string
	for _, r := range retrievers {
		for _, s := range perRetriever {
			out = append(out, r+"."+s)
		}
	}
	return append(out, baseFeatures...)
}

// docText is the analysed text of one candidate paper.
type docText struct {
	title, abs, kw []string // analysed terms, in text order
	kwSet          map[string]bool
	families       []string     // author family names, byline order
	vec            []termWeight // sorted by term
	vecNorm        float64
	titleTF, absTF map[string]float64 // term counts of title and abstract (their term sets)
}

// termWeight is one term of a bag-of-words vector.
type termWeight struct {
	term string
	w    float64
}

func analyzeDoc(c *rerank.Candidate) *docText {
	d := &docText{
		title: sparse.Analyze(c.Title),
		abs:   sparse.Analyze(c.Abstract),
		kw:    sparse.Analyze(strings.Join(c.Keywords, " ; ")),
	}
	d.titleTF, d.absTF, d.kwSet = counts(d.title), counts(d.abs), set(d.kw)
	for _, a := range c.Authors {
		f := strings.Fields(a)
		if len(f) > 0 {
			d.families = append(d.families, f[len(f)-1])
		}
	}
	bag := map[string]float64{}
	for _, t := range d.title {
		bag[t] += 2
	}
	for _, t := range d.abs {
		bag[t]++
	}
	d.vec, d.vecNorm = sortedVec(bag)
	return d
}

// queryText is the analysed query.
type queryText struct {
	terms    []string // distinct analysed terms, first-occurrence order
	termSet  map[string]bool
	bigrams  map[[2]string]int // distinct pairs of adjacent terms, numbered
	acronyms []string          // distinctive raw words: acronyms, names with inner capitals or digits
	words    map[string]bool   // raw words, case kept
	// Local contexts of the citation markers: the analysed terms of each
	// citing sentence and of the window just before each marker. Without
	// markers, the whole query is the one sentence and window.
	sents, wins [][]string
}

// markerRE finds citation markers: numeric brackets ("[3]", "[4, 7–9]")
// and "[CITATION]"-style placeholders.
var markerRE = regexp.MustCompile(`\[(?:\d+(?:\s*[,;–-]\s*\d+)*|[A-Z][A-Za-z]*)\]`)

// windowTerms is how many analysed terms before a marker make its window.
const windowTerms = 8

// localContexts returns the citing sentences and pre-marker windows of
// raw, as analysed terms.
func localContexts(raw string) (sents, wins [][]string) {
	locs := markerRE.FindAllStringIndex(raw, -1)
	for _, loc := range locs {
		start := 0
		for i := loc[0] - 1; i > 0; i-- {
			if (raw[i] == ' ' || raw[i] == '\n') && (raw[i-1] == '.' || raw[i-1] == '!' || raw[i-1] == '?') {
				start = i
				break
			}
		}
		end := len(raw)
		for i := loc[1]; i+1 < len(raw); i++ {
			if (raw[i] == '.' || raw[i] == '!' || raw[i] == '?') && (raw[i+1] == ' ' || raw[i+1] == '\n') {
				end = i + 1
				break
			}
		}
		before := sparse.Analyze(retrieve.Clean(raw[start:loc[0]]))
		if len(before) > windowTerms {
			before = before[len(before)-windowTerms:]
		}
		wins = append(wins, before)
		sents = append(sents, sparse.Analyze(retrieve.Clean(raw[start:end])))
	}
	if len(locs) == 0 {
		all := sparse.Analyze(retrieve.Clean(raw))
		sents = [][]string{all}
		w := all
		if len(w) > windowTerms {
			w = w[len(w)-windowTerms:]
		}
		wins = [][]string{w}
	}
	return sents, wins
}

func analyzeQuery(raw string) *queryText {
	q := &queryText{}
	q.sents, q.wins = localContexts(raw)
	query := retrieve.Clean(raw)
	all := sparse.Analyze(query)
	q.terms, q.termSet = uniq(all), set(all)
	q.bigrams = map[[2]string]int{}
	for i := 1; i < len(all); i++ {
		if _, ok := q.bigrams[[2]string{all[i-1], all[i]}]; !ok {
			q.bigrams[[2]string{all[i-1], all[i]}] = len(q.bigrams)
		}
	}
	ws := words(query)
	q.words = set(ws)
	seen := map[string]bool{}
	for _, w := range ws {
		if distinctive(w) && !seen[w] {
			seen[w] = true
			q.acronyms = append(q.acronyms, w)
		}
	}
	return q
}

// distinctive reports whether a raw word looks like an acronym or a
// system name: it has a capital letter or digit after its first letter,
// and at least one letter.
func distinctive(w string) bool {
	letters, inner := 0, false
	for i, r := range []rune(w) {
		if unicode.IsLetter(r) {
			letters++
		}
		if i > 0 && (unicode.IsUpper(r) || unicode.IsDigit(r)) {
			inner = true
		}
	}
	return letters > 0 && inner && len(w) >= 2
}

func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func set(ts []string) map[string]bool {
	m := make(map[string]bool, len(ts))
	for _, t := range ts {
		m[t] = true
	}
	return m
}

// counts returns how often each term occurs in ts.
func counts(ts []string) map[string]float64 {
	m := make(map[string]float64, len(ts))
	for _, t := range ts {
		m[t]++
	}
	return m
}

// containsWord reports whether w (a word as words gives them) is one of
// the words of text: words(text) holds it.
func containsWord(text, w string) bool {
	if w == "" {
		return false
	}
	for off := 0; ; {
		i := strings.Index(text[off:], w)
		if i < 0 {
			return false
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(w):])
		if !wordRune(before) && !wordRune(after) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		off = i + size
	}
}

// wordRune reports whether r belongs to a word (words splits at others;
// utf8.RuneError stands for the text's start or end).
func wordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// extractor computes feature vectors; docs caches analysed candidate
// texts by paper ID for one run over one collection (training), cache
// across queries (a Reranker's, checked against each candidate's texts);
// both may be nil.
type extractor struct {
	retrievers []string
	docs       map[string]*docText
	cache      *docCache
	queries    *queryMemo // analysed queries (Prepare); may be nil
}

func (x *extractor) doc(c *rerank.Candidate) *docText {
	if x.docs == nil {
		return analyzeDoc(c)
	}
	if d, ok := x.docs[c.ID]; ok {
		return d
	}
	d := analyzeDoc(c)
	x.docs[c.ID] = d
	return d
}

// parallelDocs is the number of candidates from which analysing their
// texts is split over the CPUs (analysis is most of a rerank's work).
const parallelDocs = 16

// parallelWorkers is how many goroutines share work on n candidates: 1
// below parallelDocs, else up to GOMAXPROCS with at least parallelDocs/2
// candidates each.
func parallelWorkers(n int) int {
	if n < parallelDocs {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), n/(parallelDocs/2)))
}

// split runs work over the indexes 0 … n-1: inline below parallelDocs,
// else on parallelWorkers(n) goroutines, each given every workers-th
// index (and free to keep scratch space of its own). It returns when all
// are done.
func split(n int, work func(idx iter.Seq[int])) {
	workers := parallelWorkers(n)
	stride := func(from int) iter.Seq[int] {
		return func(yield func(int) bool) {
			for i := from; i < n; i += workers {
				if !yield(i) {
					return
				}
			}
		}
	}
	if workers < 2 {
		work(stride(0))
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() { work(stride(w)) })
	}
	wg.Wait()
}

// docsOf analyses the candidates' texts, on up to GOMAXPROCS goroutines
// when there is no cache and enough candidates to be worth it.
func (x *extractor) docsOf(cands []rerank.Candidate) []*docText {
	docs := make([]*docText, len(cands))
	if x.docs != nil {
		for i := range cands {
			docs[i] = x.doc(&cands[i])
		}
		return docs
	}
	todo := make([]int, 0, len(cands))
	var sums []uint64
	if x.cache != nil {
		sums = make([]uint64, len(cands))
		for i := range cands {
			sums[i] = fingerprint(&cands[i])
		}
		x.cache.lookup(cands, sums, docs)
	}
	for i := range cands {
		if docs[i] == nil {
			todo = append(todo, i)
		}
	}
	split(len(todo), func(idx iter.Seq[int]) {
		for k := range idx {
			docs[todo[k]] = analyzeDoc(&cands[todo[k]])
		}
	})
	if x.cache != nil && len(todo) > 0 {
		x.cache.store(cands, sums, docs, todo)
	}
	return docs
}

// Features returns one feature vector per candidate (names as
// FeatureNames(retrievers)), computed from the query, the candidate's
// fusion provenance, its text and the candidate list as a whole. The
// query is cleaned of citation markers first.
func Features(query string, cands []rerank.Candidate, retrievers []string) [][]float64 {
	x := &extractor{retrievers: retrievers}
	return x.features(query, cands)
}

func (x *extractor) features(query string, cands []rerank.Candidate) [][]float64 {
	n := len(cands)
	out := make([][]float64, n)
	if n == 0 {
		return out
	}
	var q *queryText
	if x.queries != nil {
		q = x.queries.get(query)
	} else {
		q = analyzeQuery(query)
	}
	docs := x.docsOf(cands)

	// Pool statistics: document frequency of query terms over the
	// candidates, average field lengths, venue counts, years.
	df := map[string]float64{}
	dfTerms := slices.Clone(q.terms)
	for _, ts := range append(slices.Clone(q.sents), q.wins...) {
		for _, t := range ts {
			if !q.termSet[t] && !slices.Contains(dfTerms, t) {
				dfTerms = append(dfTerms, t)
			}
		}
	}
	var titleLen, absLen float64
	venues := map[string]int{}
	var years []int
	for i, d := range docs {
		for _, t := range dfTerms {
			if d.titleTF[t] > 0 || d.absTF[t] > 0 || d.kwSet[t] {
				df[t]++
			}
		}
		titleLen += float64(len(d.title))
		absLen += float64(len(d.abs))
		if v := strings.ToLower(strings.TrimSpace(cands[i].Venue)); v != "" {
			venues[v]++
		}
		if cands[i].Year > 0 {
			years = append(years, cands[i].Year)
		}
	}
	slices.Sort(years)
	titleLen, absLen = titleLen/float64(n), absLen/float64(n)
	idf := make(map[string]float64, len(dfTerms))
	for _, t := range dfTerms {
		idf[t] = math.Log(1 + (float64(n)-df[t]+0.5)/(df[t]+0.5))
	}
	idfSum := 0.0
	for _, t := range q.terms {
		idfSum += idf[t]
	}

	// Per-retriever list statistics over the candidates it returned.
	rs := make([]listStats, len(x.retrievers))
	for k, r := range x.retrievers {
		var vals []float64
		for i := range cands {
			if s, ok := cands[i].Sources[r]; ok && s.Rank > 0 {
				vals = append(vals, s.Score)
			}
		}
		rs[k] = statsOf(vals)
	}
	fused := make([]float64, n)
	for i := range cands {
		fused[i] = cands[i].Score
	}
	fs := statsOf(fused)

	// Pseudo-relevance centroid of the top fused candidates.
	centroid := map[string]float64{}
	for i := 0; i < min(prfDepth, n); i++ {
		for _, tw := range docs[i].vec {
			centroid[tw.term] += tw.w
		}
	}
	_, cNorm := sortedVec(centroid)

	nq := float64(len(q.terms))
	nf := len(x.retrievers)*len(perRetriever) + len(baseFeatures)
	base := len(x.retrievers) * len(perRetriever)
	// each candidate's vector depends only on the pool statistics above:
	// split over the CPUs like the analysis
	split(n, func(idx iter.Seq[int]) {
		seenBigram := make([]bool, len(q.bigrams))
		for i := range idx {
			c, d := &cands[i], docs[i]
			f := make([]float64, 0, nf)
			for k, r := range x.retrievers {
				s, ok := c.Sources[r]
				if !ok || s.Rank <= 0 {
					// Not returned: below the lowest it returned.
					f = append(f, 0, missingRank, 0, 0, rs[k].z(rs[k].lo)-0.5, 0)
					continue
				}
				f = append(f, 1, float64(s.Rank)/float64(n), 1/float64(s.Rank), rs[k].minmax(s.Score), rs[k].z(s.Score), rs[k].ratio(s.Score))
			}
			rank := c.Rank
			if rank <= 0 {
				rank = i + 1
			}
			count := 0
			for _, r := range x.retrievers {
				if s, ok := c.Sources[r]; ok && s.Rank > 0 {
					count++
				}
			}
			f = append(f, float64(rank)/float64(n), 1/float64(rank), fs.minmax(c.Score), fs.z(c.Score),
				safeDiv(float64(count), float64(len(x.retrievers))))

			var tHit, tIdf, aHit, aIdf, kHit, allIdf float64
			for _, t := range q.terms {
				inT, inA, inK := d.titleTF[t] > 0, d.absTF[t] > 0, d.kwSet[t]
				if inT {
					tHit++
					tIdf += idf[t]
				}
				if inA {
					aHit++
					aIdf += idf[t]
				}
				if inK {
					kHit++
				}
				if inT || inA || inK {
					allIdf += idf[t]
				}
			}
			titleInQuery := 0.0
			for t := range d.titleTF {
				if q.termSet[t] {
					titleInQuery++
				}
			}
			// title bigrams (with repeats) that are query bigrams; distinct
			// query bigrams found in the abstract
			tb := 0.0
			for k := 1; k < len(d.title); k++ {
				if _, ok := q.bigrams[[2]string{d.title[k-1], d.title[k]}]; ok {
					tb++
				}
			}
			ab := 0.0
			clear(seenBigram)
			for k := 1; k < len(d.abs); k++ {
				if j, ok := q.bigrams[[2]string{d.abs[k-1], d.abs[k]}]; ok && !seenBigram[j] {
					seenBigram[j] = true
					ab++
				}
			}
			f = append(f,
				safeDiv(tHit, nq), safeDiv(tIdf, idfSum), safeDiv(titleInQuery, float64(len(d.titleTF))),
				safeDiv(tb, float64(max(len(d.title)-1, 0))), bm25(q.terms, idf, d.titleTF, len(d.title), titleLen),
				safeDiv(aHit, nq), safeDiv(aIdf, idfSum), safeDiv(ab, float64(len(q.bigrams))), bm25(q.terms, idf, d.absTF, len(d.abs), absLen),
				safeDiv(kHit, nq),
				safeDiv(allIdf, idfSum), safeDiv(allIdf, idfSum)) // all.idfcov.z: z-scored below

			var acT, acA float64
			for _, w := range q.acronyms {
				inTitle := containsWord(c.Title, w)
				if inTitle {
					acT++
				}
				if inTitle || containsWord(c.Abstract, w) {
					acA++
				}
			}
			na := float64(len(q.acronyms))
			f = append(f, safeDiv(acT, na), safeDiv(acA, na))

			anyAuthor, firstAuthor := 0.0, 0.0
			for j, fam := range d.families {
				if len([]rune(fam)) >= 3 && q.words[fam] {
					anyAuthor = 1
					if j == 0 {
						firstAuthor = 1
					}
				}
			}
			f = append(f, anyAuthor, firstAuthor)

			hasAbs := 0.0
			if len(d.abs) > 0 {
				hasAbs = 1
			}
			f = append(f, safeDiv(float64(len(d.title)), titleLen), safeDiv(float64(len(d.abs)), absLen), hasAbs)

			// The share of the dated candidates older than this one.
			ypct, yhas := 0.0, 0.0
			if c.Year > 0 {
				older, _ := slices.BinarySearch(years, c.Year)
				ypct, yhas = safeDiv(float64(older), float64(len(years)-1)), 1
			}
			f = append(f, ypct, yhas)

			vp := 0.0
			if v := strings.ToLower(strings.TrimSpace(c.Venue)); v != "" {
				vp = float64(venues[v]-1) / float64(n)
			}
			f = append(f, vp)

			sim := 0.0
			if d.vecNorm > 0 && cNorm > 0 {
				dot := 0.0
				for _, tw := range d.vec {
					dot += tw.w * centroid[tw.term]
				}
				sim = dot / (d.vecNorm * cNorm)
			}
			f = append(f, sim, sim) // prf.simr: a share of the best, below

			var winAll, winTitle, sentAll, sentBM25 float64
			for _, w := range q.wins {
				a, t := localCoverage(w, idf, d)
				winAll, winTitle = math.Max(winAll, a), math.Max(winTitle, t)
			}
			for _, st := range q.sents {
				a, _ := localCoverage(st, idf, d)
				sentAll = math.Max(sentAll, a)
				u := uniq(st)
				sentBM25 = math.Max(sentBM25, bm25(u, idf, d.absTF, len(d.abs), absLen)+bm25(u, idf, d.titleTF, len(d.title), titleLen))
			}
			f = append(f, winAll, winTitle, sentAll, sentBM25)
			out[i] = f
		}
	})

	// Scores whose scale depends on the query (BM25 grows with its
	// length) become a share of the best candidate's; the overlap is
	// z-scored over the candidates.
	for _, name := range []string{"title.bm25", "abs.bm25", "sent.bm25", "prf.simr"} {
		col := base + slices.Index(baseFeatures, name)
		hi := 0.0
		for _, f := range out {
			hi = math.Max(hi, f[col])
		}
		for _, f := range out {
			f[col] = safeDiv(f[col], hi)
		}
	}
	col := base + slices.Index(baseFeatures, "all.idfcov.z")
	vals := make([]float64, n)
	for i, f := range out {
		vals[i] = f[col]
	}
	st := statsOf(vals)
	for _, f := range out {
		f[col] = st.z(f[col])
	}
	// A retriever may report a non-finite score; no feature is left NaN
	// or infinite.
	for _, f := range out {
		for k, v := range f {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				f[k] = 0
			}
		}
	}
	return out
}

// listStats are the lowest, highest and mean score of a list and their
// standard deviation.
type listStats struct{ lo, hi, mean, sd float64 }

// statsOf returns the statistics of the finite values of vals.
func statsOf(vals []float64) listStats {
	s := listStats{lo: math.Inf(1), hi: math.Inf(-1)}
	k := 0
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		s.lo, s.hi = math.Min(s.lo, v), math.Max(s.hi, v)
		s.mean += v
		k++
	}
	if k == 0 {
		return listStats{}
	}
	s.mean /= float64(k)
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		s.sd += (v - s.mean) * (v - s.mean)
	}
	s.sd = math.Sqrt(s.sd / float64(k))
	return s
}

// minmax maps v into [0, 1] over the list (1 when all are equal).
func (s listStats) minmax(v float64) float64 {
	if s.hi > s.lo {
		return (v - s.lo) / (s.hi - s.lo)
	}
	return 1
}

// z is v's z-score in the list (0 when all are equal).
func (s listStats) z(v float64) float64 {
	if s.sd > 0 {
		return (v - s.mean) / s.sd
	}
	return 0
}

// ratio is v as a share of the list's best score (0 when that is not
// positive).
func (s listStats) ratio(v float64) float64 {
	if s.hi > 0 {
		return v / s.hi
	}
	return 0
}

// localCoverage returns the idf-weighted share of the distinct terms ts
// found in the candidate's title, abstract or keywords, and in its title.
func localCoverage(ts []string, idf map[string]float64, d *docText) (all, title float64) {
	var sum, a, t float64
	for _, term := range uniq(ts) {
		w := idf[term]
		sum += w
		if d.titleTF[term] > 0 || d.absTF[term] > 0 || d.kwSet[term] {
			a += w
		}
		if d.titleTF[term] > 0 {
			t += w
		}
	}
	return safeDiv(a, sum), safeDiv(t, sum)
}

// uniq returns the distinct terms of ts in first-occurrence order.
func uniq(ts []string) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// sortedVec returns the entries of bag sorted by term, and their
// Euclidean norm (summed in that order, so it is deterministic).
func sortedVec(bag map[string]float64) ([]termWeight, float64) {
	out := make([]termWeight, 0, len(bag))
	for t, w := range bag {
		out = append(out, termWeight{t, w})
	}
	slices.SortFunc(out, func(a, b termWeight) int { return strings.Compare(a.term, b.term) })
	s := 0.0
	for _, tw := range out {
		s += tw.w * tw.w
	}
	return out, math.Sqrt(s)
}

// bm25 scores one field of a document (its term counts tf and length n)
// against the query terms with the pool's idf and average field length
// (k1 1.2, b 0.75).
func bm25(terms []string, idf map[string]float64, tf map[string]float64, n int, avgLen float64) float64 {
	if n == 0 {
		return 0
	}
	const k1, b = 1.2, 0.75
	s := 0.0
	norm := k1 * (1 - b + b*safeDiv(float64(n), avgLen))
	for _, t := range terms {
		if f := tf[t]; f > 0 {
			s += idf[t] * f * (k1 + 1) / (f + norm)
		}
	}
	return s
}
