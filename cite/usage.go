package cite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/citefind/citefind/corpus"
)

// ContentHash identifies a draft by what it cites where: the SHA-256 (hex)
// of its Normalize form, so a draft and its resolved Markdown output hash
// the same.
func ContentHash(draft string) (string, error) {
	n, err := Normalize(draft)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(n))
	return hex.EncodeToString(sum[:]), nil
}

// DraftUsage builds the usage record of a resolved document. paths are the
// draft files it was read from ("-" for standard input), doc the document
// that was resolved (drafts merged), cited the paper IDs it cites
// (Result.Cited) and searches the searches behind it.
//
// The draft's key is its file path(s), made absolute, so resolving an
// edited version of the same file replaces its record; a draft read from
// standard input is keyed by ContentHash, so resolving the same content
// again (or its resolved Markdown output) changes nothing.
func DraftUsage(paths []string, doc string, cited []string, searches []corpus.Search) (corpus.DraftUsage, error) {
	content, err := ContentHash(doc)
	if err != nil {
		return corpus.DraftUsage{}, err
	}
	d := corpus.DraftUsage{Content: content, Cited: cited, Searches: searches}
	stdin := len(paths) == 0
	abs := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "-" {
			stdin = true
			break
		}
		a, err := filepath.Abs(p)
		if err != nil {
			return corpus.DraftUsage{}, err
		}
		abs = append(abs, a)
	}
	if stdin {
		d.ID = "content:" + content
		d.Name = strings.Join(paths, ", ")
		if d.Name == "" {
			d.Name = "-"
		}
		return d, nil
	}
	d.Name = strings.Join(abs, ", ")
	sum := sha256.Sum256([]byte(strings.Join(abs, "\x00")))
	d.ID = "path:" + hex.EncodeToString(sum[:])
	return d, nil
}

// UsageStats is the citation usage of the recorded drafts: which retrieved
// papers were cited. Rates are in [0, 1]. Lists are sorted as documented
// on each field.
type UsageStats struct {
	Totals UsageTotals `json:"totals"`
	// Searches, in the order first seen.
	Searches []SearchStats `json:"searches"`
	// Drafts, in the order first resolved.
	Drafts []DraftStats `json:"drafts"`
	// Papers cited or retrieved: most cited first, then most retrieved, then by ID.
	Papers []PaperStats `json:"papers"`
	// NeverCited are the papers retrieved but cited by no draft, most
	// retrieved first, then by ID.
	NeverCited []PaperStats `json:"retrieved_never_cited"`
	// NotRetrieved are the papers cited by a draft with searches although
	// none of its searches returned them, most drafts first, then by ID.
	NotRetrieved []NotRetrieved `json:"cited_not_retrieved"`
}

// UsageTotals sums up UsageStats.
type UsageTotals struct {
	Drafts   int `json:"drafts"`
	Searches int `json:"searches"`
	// Hits is the number of hits over all searches; CitedHits how many of
	// them were cited by a draft the search is behind.
	Hits      int `json:"hits"`
	CitedHits int `json:"cited_hits"`
	// Rate is CitedHits / Hits (0 without hits).
	Rate float64 `json:"citation_rate"`
	// Citations is the number of (draft, paper) citations; Retrieved how
	// many of them were returned by one of the draft's searches.
	Citations int `json:"citations"`
	Retrieved int `json:"citations_retrieved"`
	// PapersCited and PapersRetrieved count distinct papers.
	PapersCited     int `json:"papers_cited"`
	PapersRetrieved int `json:"papers_retrieved"`
}

// SearchStats is one search: its hits and how many of them were cited.
type SearchStats struct {
	ID    string `json:"id"`
	Query string `json:"query"`
	Hits  int    `json:"hits"`
	// Cited is how many of its hits a draft linked to the search cites.
	Cited int     `json:"cited"`
	Rate  float64 `json:"citation_rate"` // Cited / Hits (0 without hits)
	// Drafts is how many drafts the search is behind.
	Drafts    int    `json:"drafts"`
	FirstSeen string `json:"first_seen"` // RFC 3339
}

// DraftStats is one resolved draft.
type DraftStats struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Citations int    `json:"citations"` // distinct papers cited
	Searches  int    `json:"searches"`
	// Retrieved is how many cited papers one of its searches returned.
	Retrieved  int    `json:"retrieved"`
	ResolvedAt string `json:"resolved_at"` // RFC 3339
}

// PaperStats is one paper's usage.
type PaperStats struct {
	ID    string `json:"id"`
	Title string `json:"title"` // "" when the paper is no longer in the store
	// Cited is the number of drafts citing it; Retrieved the number of
	// searches returning it.
	Cited     int `json:"cited"`
	Retrieved int `json:"retrieved"`
	// PerRetrieval is Cited / Retrieved; nil when never retrieved. It can
	// exceed 1 when several drafts cite a paper one search found.
	PerRetrieval *float64 `json:"cited_per_retrieved"`
}

// NotRetrieved is a paper cited by drafts whose searches did not return it.
type NotRetrieved struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	Drafts []string `json:"drafts"` // draft names, in the order first resolved
}

// Stats computes the usage statistics of u; lk supplies paper titles (one
// GetMany call; nil for none).
func Stats(ctx context.Context, u corpus.Usage, lk Lookup) (*UsageStats, error) {
	st := &UsageStats{Searches: []SearchStats{}, Drafts: []DraftStats{}, Papers: []PaperStats{}, NeverCited: []PaperStats{}, NotRetrieved: []NotRetrieved{}}
	st.Totals.Drafts = len(u.Drafts)
	st.Totals.Searches = len(u.Searches)

	// citedBy[search] = papers cited by the drafts linked to the search.
	citedBy := map[string]map[string]bool{}
	draftsOf := map[string]int{}
	citedDrafts := map[string]int{}
	type nr struct {
		drafts []string
	}
	notRetr := map[string]*nr{}
	for _, d := range u.Drafts {
		hits := map[string]bool{}
		for _, se := range d.Searches {
			draftsOf[se.ID]++
			if citedBy[se.ID] == nil {
				citedBy[se.ID] = map[string]bool{}
			}
			for _, id := range d.Cited {
				citedBy[se.ID][id] = true
			}
			for _, h := range se.Hits {
				hits[h] = true
			}
		}
		ds := DraftStats{ID: d.ID, Name: d.Name, Citations: len(d.Cited), Searches: len(d.Searches), ResolvedAt: rfc3339(d.ResolvedAt)}
		for _, id := range d.Cited {
			citedDrafts[id]++
			if hits[id] {
				ds.Retrieved++
			} else if len(d.Searches) > 0 {
				if notRetr[id] == nil {
					notRetr[id] = &nr{}
				}
				notRetr[id].drafts = append(notRetr[id].drafts, d.Name)
			}
		}
		st.Totals.Citations += ds.Citations
		st.Totals.Retrieved += ds.Retrieved
		st.Drafts = append(st.Drafts, ds)
	}
	retrieved := map[string]int{}
	for _, se := range u.Searches {
		ss := SearchStats{ID: se.ID, Query: se.Query, Hits: len(se.Hits), Drafts: draftsOf[se.ID], FirstSeen: rfc3339(se.FirstSeen)}
		for _, h := range se.Hits {
			retrieved[h]++
			if citedBy[se.ID][h] {
				ss.Cited++
			}
		}
		ss.Rate = ratio(ss.Cited, ss.Hits)
		st.Totals.Hits += ss.Hits
		st.Totals.CitedHits += ss.Cited
		st.Searches = append(st.Searches, ss)
	}
	st.Totals.Rate = ratio(st.Totals.CitedHits, st.Totals.Hits)
	st.Totals.PapersCited = len(citedDrafts)
	st.Totals.PapersRetrieved = len(retrieved)

	ids := map[string]bool{}
	for id := range citedDrafts {
		ids[id] = true
	}
	for id := range retrieved {
		ids[id] = true
	}
	all := make([]string, 0, len(ids))
	for id := range ids {
		all = append(all, id)
	}
	sort.Strings(all)
	titles := map[string]string{}
	if lk != nil && len(all) > 0 {
		ps, err := lk.GetMany(ctx, all)
		if err != nil {
			return nil, fmt.Errorf("usage stats: %w", err)
		}
		for k, p := range ps {
			titles[k] = p.Title
		}
	}
	for _, id := range all {
		ps := PaperStats{ID: id, Title: titles[id], Cited: citedDrafts[id], Retrieved: retrieved[id]}
		if ps.Retrieved > 0 {
			r := float64(ps.Cited) / float64(ps.Retrieved)
			ps.PerRetrieval = &r
		}
		st.Papers = append(st.Papers, ps)
		if ps.Cited == 0 {
			st.NeverCited = append(st.NeverCited, ps)
		}
		if n := notRetr[id]; n != nil {
			st.NotRetrieved = append(st.NotRetrieved, NotRetrieved{ID: id, Title: titles[id], Drafts: n.drafts})
		}
	}
	sort.SliceStable(st.Papers, func(i, j int) bool {
		a, b := st.Papers[i], st.Papers[j]
		if a.Cited != b.Cited {
			return a.Cited > b.Cited
		}
		return a.Retrieved > b.Retrieved
	})
	sort.SliceStable(st.NeverCited, func(i, j int) bool { return st.NeverCited[i].Retrieved > st.NeverCited[j].Retrieved })
	sort.SliceStable(st.NotRetrieved, func(i, j int) bool { return len(st.NotRetrieved[i].Drafts) > len(st.NotRetrieved[j].Drafts) })
	return st, nil
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
