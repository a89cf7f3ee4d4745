package selector

import (
	"strings"

	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/internal/editdist"
	"github.com/citefind/citefind/internal/llm"
	"github.com/citefind/citefind/rerank"
)

// FuzzyThreshold is the least TitleSimilarity at which a title the model
// wrote is taken to be a candidate's title.
const FuzzyThreshold = 0.9

// TitleSimilarity is the normalised Levenshtein similarity of two
// titles after NormalizeTitle: 1 − d/max(|a|, |b|), where d is the edit
// distance in runes (insertions, deletions, substitutions, each costing
// 1). It is in [0, 1]: 1 for equal titles, 0 when a title is empty. A
// one-character typo in a 40-character title scores 0.975; a dropped
// subtitle usually falls well below FuzzyThreshold.
func TitleSimilarity(a, b string) float64 {
	ra, rb := []rune(corpus.NormalizeTitle(a)), []rune(corpus.NormalizeTitle(b))
	if len(ra) == 0 || len(rb) == 0 {
		return 0
	}
	return 1 - float64(editdist.Levenshtein(ra, rb))/float64(max(len(ra), len(rb)))
}

// answer is what the model said, as parsed.
type answer struct {
	ID, Title, Reasoning string
	Year                 int
}

// match maps an answer to an index into cands (shown under ids, parallel
// to cands), returning -1 when nothing maps. Rules, in order:
//
//  1. the ID, after llm.NormalizeID, is one of ids;
//  2. the normalised title equals a candidate's normalised title;
//  3. the title's TitleSimilarity with a candidate's is >= FuzzyThreshold,
//     the most similar winning.
//
// When several candidates tie in step 2 or 3 (the same title twice), the
// one whose year equals the answer's year wins; failing that, the best
// ranked (earliest in cands). An ID that is not a shown ID falls through
// to the title steps; a title that names another candidate than a valid
// ID does is ignored (the ID wins). An answer whose ID field holds
// something longer than an ID (a title) is matched as a title too.
func match(a answer, cands []rerank.Candidate, ids []string) (int, string) {
	if id := llm.NormalizeID(a.ID); id != "" {
		for i, s := range ids {
			if s == id {
				return i, MatchID
			}
		}
	}
	title := a.Title
	if title == "" && len([]rune(strings.TrimSpace(a.ID))) > 2*llm.IDLen {
		title = a.ID
	}
	nt := corpus.NormalizeTitle(title)
	if nt == "" {
		return -1, ""
	}
	var exact []int
	for i, c := range cands {
		if corpus.NormalizeTitle(c.Title) == nt {
			exact = append(exact, i)
		}
	}
	if len(exact) > 0 {
		return byYear(exact, cands, a.Year), MatchTitle
	}
	best, bestSim := []int(nil), FuzzyThreshold
	for i, c := range cands {
		sim := TitleSimilarity(title, c.Title)
		switch {
		case sim > bestSim:
			best, bestSim = []int{i}, sim
		case sim == bestSim: // bestSim >= FuzzyThreshold always
			best = append(best, i)
		}
	}
	if len(best) == 0 {
		return -1, ""
	}
	return byYear(best, cands, a.Year), MatchFuzzyTitle
}

// byYear breaks a tie among candidate indices (best ranked first): the
// first whose year is year, else the first.
func byYear(tied []int, cands []rerank.Candidate, year int) int {
	if year != 0 {
		for _, i := range tied {
			if cands[i].Year == year {
				return i
			}
		}
	}
	return tied[0]
}
