package eval

import (
	"context"
	"sort"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// Gold describes one judged-relevant paper of a benchmark that ships no
// collection, by whatever identifiers the benchmark gives. Any of them
// identifies the paper; see MatchGold for the order they are tried in.
type Gold struct {
	IDs    []string // paper IDs or aliases, e.g. a LitSearch corpus id ("202719327")
	DOI    string   // normalised DOI, "" when unknown
	ArXiv  string   // arXiv id without version, "" when unknown
	Titles []string // the title; several when the benchmark accepts alternatives (CiteME)
	Year   int      // publication year as the benchmark gives it; 0 when unknown
}

// Match methods, the values of Match.By.
const (
	ByID    = "id"
	ByDOI   = "doi"
	ByArXiv = "arxiv"
	ByTitle = "title"
)

// TitleYearSlack is how far, in years, a paper's year may be from a gold
// paper's year for a title match to count (an arXiv preprint is often
// published a year or two later). Papers or gold without a year match
// on the title alone.
const TitleYearSlack = 2

// Catalog looks papers of a collection up by DOI, arXiv id and normalised
// title (corpus.NormalizeTitle). Build it with Add for every paper (e.g.
// from corpus.Store.Each); it is not safe for concurrent Add.
type Catalog struct {
	doi    map[string][]string
	arxiv  map[string][]string
	titles map[string][]titled
	n      int
}

type titled struct {
	id   string
	year int
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog {
	return &Catalog{doi: map[string][]string{}, arxiv: map[string][]string{}, titles: map[string][]titled{}}
}

// Add records one paper.
func (c *Catalog) Add(p corpus.Paper) {
	c.n++
	if d := corpus.NormalizeDOI(p.DOI); d != "" {
		c.doi[d] = append(c.doi[d], p.ID)
	}
	a := corpus.NormalizeArXiv(p.ArXiv)
	if a == "" && strings.HasPrefix(p.ID, "arxiv:") {
		a = strings.TrimPrefix(p.ID, "arxiv:")
	}
	if a != "" {
		c.arxiv[a] = append(c.arxiv[a], p.ID)
	}
	if t := corpus.NormalizeTitle(p.Title); t != "" {
		c.titles[t] = append(c.titles[t], titled{p.ID, p.Year})
	}
}

// Len returns the number of papers added.
func (c *Catalog) Len() int { return c.n }

// BuildCatalog reads every paper of st into a new Catalog.
func BuildCatalog(ctx context.Context, st *corpus.Store) (*Catalog, error) {
	c := NewCatalog()
	err := st.Each(ctx, func(p corpus.Paper) error {
		c.Add(p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Match finds the papers of the catalog that are g, trying in order, first
// hit wins: the DOI, the arXiv id, then every title (normalised; a paper
// whose year is more than TitleYearSlack from g's is not a match). Papers
// come back sorted; by says which identifier matched ("" when none did).
// IDs and aliases are not the catalog's business: see MatchGold.
func (c *Catalog) Match(g Gold) (papers []string, by string) {
	if d := corpus.NormalizeDOI(g.DOI); d != "" && len(c.doi[d]) > 0 {
		return sortedUnique(c.doi[d]), ByDOI
	}
	if a := corpus.NormalizeArXiv(g.ArXiv); a != "" && len(c.arxiv[a]) > 0 {
		return sortedUnique(c.arxiv[a]), ByArXiv
	}
	var out []string
	for _, t := range g.Titles {
		for _, p := range c.titles[corpus.NormalizeTitle(t)] {
			if g.Year != 0 && p.year != 0 && (p.year < g.Year-TitleYearSlack || p.year > g.Year+TitleYearSlack) {
				continue
			}
			out = append(out, p.id)
		}
	}
	if len(out) == 0 {
		return nil, ""
	}
	return sortedUnique(out), ByTitle
}

func sortedUnique(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	w := 0
	for i, id := range out {
		if i == 0 || id != out[w-1] {
			out[w] = id
			w++
		}
	}
	return out[:w]
}

// MatchGold maps the judged ids of set (the keys of set.Gold, or plain
// paper IDs/aliases for sets without Gold) to the papers of a collection,
// for Options.ResolveGold. A gold paper is found, first hit wins:
//
//  1. by one of its IDs (paper ID or alias, through resolve — the store's
//     Resolve), e.g. a LitSearch corpus id when the LitSearch corpus was
//     ingested;
//  2. by DOI (through resolve, as DOIs are paper IDs, then the catalog);
//  3. by arXiv id (the catalog);
//  4. by normalised title, any of its alternative titles (the catalog;
//     see Catalog.Match for the year check).
//
// A judged id that nothing matches is absent from the map: it is missing
// from the collection and stays in the recall denominator. cat may be nil
// when only IDs are to be matched.
func MatchGold(set TopicSet, cat *Catalog, resolve func(ids []string) (map[string]string, error)) func(ids []string) (map[string]Match, error) {
	return func(ids []string) (map[string]Match, error) {
		// Every id and DOI in one resolve call.
		var ask []string
		for _, id := range ids {
			g, ok := set.Gold[id]
			if !ok {
				ask = append(ask, id)
				continue
			}
			ask = append(ask, g.IDs...)
			if g.DOI != "" {
				ask = append(ask, g.DOI)
			}
		}
		found := map[string]string{}
		if resolve != nil && len(ask) > 0 {
			var err error
			if found, err = resolve(sortedUnique(ask)); err != nil {
				return nil, err
			}
		}
		out := make(map[string]Match, len(ids))
		for _, id := range ids {
			g, ok := set.Gold[id]
			if !ok {
				if p := found[id]; p != "" {
					out[id] = Match{Papers: []string{p}, By: ByID}
				}
				continue
			}
			var ps []string
			for _, k := range g.IDs {
				if p := found[k]; p != "" {
					ps = append(ps, p)
				}
			}
			if len(ps) > 0 {
				out[id] = Match{Papers: sortedUnique(ps), By: ByID}
				continue
			}
			if p := found[g.DOI]; g.DOI != "" && p != "" {
				out[id] = Match{Papers: []string{p}, By: ByDOI}
				continue
			}
			if cat == nil {
				continue
			}
			if ps, by := cat.Match(g); len(ps) > 0 {
				out[id] = Match{Papers: ps, By: by}
			}
		}
		return out, nil
	}
}
