package cite_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
)

// Synthetic CSL-JSON items for the conformance test against pandoc: invented
// records (fictional people, venues and DOIs under the test prefix 10.5555),
// shaped like real bibliographic data. Deterministic for a seed.

var (
	latinFamilies = []string{"Smith", "Nguyen", "García Márquez", "Müller", "O'Brien", "Østergaard", "Kowalczyk", "Tanaka",
		"Ahmed", "Dubois", "Rossi", "Ivanova", "Chen", "Papadopoulos", "Johansson", "Zhang", "Fernández", "Okafor",
		"Šimić", "Lefèvre", "Kim", "Patel", "Brown", "MacDonald", "Lee", "Hoffmann-Riem"}
	givens = []string{"Anna", "Jean-Luc", "María José", "Jörg", "Siobhan", "Søren", "Zofia", "Haruki", "Fatima",
		"Élodie", "Marco", "Irina", "Wei", "Nikos", "Lars", "Yu", "Ming", "Lucía", "Pieter", "Chinedu", "Ivana",
		"Amélie", "Min-jun", "Ravi", "Thomas J.", "A. B.", "J. R. R."}
	// particle names: family, given, particle fields
	particles = []map[string]any{
		{"family": "Berg", "given": "Jan", "non-dropping-particle": "van der"},
		{"family": "Gaulle", "given": "Charles", "dropping-particle": "de"},
		{"family": "Beethoven", "given": "Ludwig", "dropping-particle": "van"},
		{"family": "Hooft", "given": "Gerard", "non-dropping-particle": "'t"},
		{"family": "Humboldt", "given": "Alexander", "dropping-particle": "von"},
		{"family": "Medici", "given": "Lorenzo", "non-dropping-particle": "de'"},
		{"family": "Souza", "given": "Ana", "non-dropping-particle": "de"},
	}
	suffixed = []map[string]any{
		{"family": "King", "given": "Martin Luther", "suffix": "Jr."},
		{"family": "Gates", "given": "William H.", "suffix": "III"},
		{"family": "Davis", "given": "Sammy", "suffix": "Jr.", "comma-suffix": true},
	}
	corporate = []map[string]any{
		{"literal": "World Health Organization"},
		{"literal": "IEEE Standards Association"},
		{"literal": "The Synthetic Data Consortium"},
		{"literal": "Association for Imaginary Linguistics"},
	}
	nonLatin = []map[string]any{
		{"family": "王", "given": "小明"},
		{"family": "山田", "given": "太郎"},
		{"family": "Иванов", "given": "Сергей"},
		{"family": "Παπαδόπουλος", "given": "Γιώργος"},
		{"family": "김", "given": "민준"},
		{"literal": "محمد عبد الله"},
	}
	topics = []string{"sparse retrieval", "dense passage encoders", "citation recommendation", "query reformulation",
		"rank fusion", "learned reranking", "neural topic models", "scholarly knowledge graphs",
		"cross-lingual search", "zero-shot evaluation", "document expansion", "hybrid indexing"}
	patterns = []string{"A study of %s", "%s for scientific literature", "Revisiting %s: An empirical analysis",
		"On the limits of %s", "%s at scale", "Towards robust %s", "What makes %s work?",
		"Benchmarking %s in the wild", "%s without supervision", "The case for %s: Lessons from the DNA of BERT"}
	journals = []string{"Journal of Information Retrieval Research", "Transactions on Synthetic Systems",
		"Information Processing Letters in Test", "Data Science Review", "Nature of Imaginary Things"}
	journalAbbr = []string{"J. Inf. Retr. Res.", "Trans. Synth. Syst.", "Inf. Process. Lett. Test", "Data Sci. Rev.", "Nat. Imag. Things"}
	confs       = []string{"Proceedings of the Synthetic Conference on Retrieval", "Proceedings of the Workshop on Test Data",
		"Proceedings of the 12th International Symposium on Imaginary Systems"}
	publishers = []string{"Example Press", "Fictional University Press", "Placeholder Publishing", "Springer"}
	places     = []string{"New York", "Berlin", "Geneva", "Cambridge, MA", "London"}
	types      = []string{"article-journal", "article-journal", "article-journal", "paper-conference", "paper-conference",
		"book", "chapter", "report", "thesis", "webpage", "article", "dataset", "software", "article-magazine",
		"article-newspaper", "entry-encyclopedia", "post-weblog", "manuscript", "motion_picture", "patent",
		"speech", "interview", "map", "legal_case", "broadcast"}
)

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}

// syntheticItems returns n varied CSL-JSON items with ids item001….
func syntheticItems(n int, seed int64) []json.RawMessage {
	rng := rand.New(rand.NewSource(seed))
	pick := func(xs []string) string { return xs[rng.Intn(len(xs))] }
	person := func() map[string]any {
		switch r := rng.Intn(20); {
		case r == 0:
			return particles[rng.Intn(len(particles))]
		case r == 1:
			return suffixed[rng.Intn(len(suffixed))]
		case r == 2:
			return nonLatin[rng.Intn(len(nonLatin))]
		default:
			return map[string]any{"family": pick(latinFamilies), "given": pick(givens)}
		}
	}
	var out []json.RawMessage
	for i := 0; i < n; i++ {
		typ := types[i%len(types)]
		it := map[string]any{"id": fmt.Sprintf("item%03d", i+1), "type": typ}
		title := upperFirst(fmt.Sprintf(pick(patterns), pick(topics)))
		it["title"] = title
		// Authors: 1–30, or corporate, or non-Latin, or none.
		var authors []map[string]any
		switch r := rng.Intn(12); {
		case r == 0 && i%5 != 0:
			// no author
		case r == 1:
			authors = append(authors, corporate[rng.Intn(len(corporate))])
		default:
			k := 1 + rng.Intn(4)
			if rng.Intn(5) == 0 {
				k = 5 + rng.Intn(26) // up to 30
			}
			for j := 0; j < k; j++ {
				authors = append(authors, person())
			}
		}
		if authors != nil {
			it["author"] = authors
		}
		// Date: year, year-month, full date, season-less; sometimes missing.
		if rng.Intn(10) != 0 {
			y := 1990 + rng.Intn(35)
			switch rng.Intn(3) {
			case 0:
				it["issued"] = map[string]any{"date-parts": [][]int{{y}}}
			case 1:
				it["issued"] = map[string]any{"date-parts": [][]int{{y, 1 + rng.Intn(12)}}}
			default:
				it["issued"] = map[string]any{"date-parts": [][]int{{y, 1 + rng.Intn(12), 1 + rng.Intn(28)}}}
			}
		}
		doi := fmt.Sprintf("10.5555/TEST.%04d", i+1)
		switch typ {
		case "article-journal", "article-magazine", "article-newspaper":
			j := rng.Intn(len(journals))
			it["container-title"] = journals[j]
			if rng.Intn(3) == 0 {
				it["container-title-short"] = journalAbbr[j]
			}
			if typ == "article-journal" {
				it["volume"] = fmt.Sprint(1 + rng.Intn(60))
				if rng.Intn(2) == 0 {
					it["issue"] = fmt.Sprint(1 + rng.Intn(12))
				}
			}
			p := 1 + rng.Intn(400)
			it["page"] = fmt.Sprintf("%d-%d", p, p+rng.Intn(30))
			if rng.Intn(3) != 0 {
				it["DOI"] = doi
			}
		case "paper-conference":
			it["container-title"] = pick(confs)
			it["publisher"] = pick(publishers)
			if rng.Intn(2) == 0 {
				it["publisher-place"] = pick(places)
			}
			p := 1 + rng.Intn(400)
			it["page"] = fmt.Sprintf("%d–%d", p, p+8)
			if rng.Intn(2) == 0 {
				it["DOI"] = doi
			}
			if rng.Intn(4) == 0 {
				it["event-place"] = pick(places)
			}
		case "book", "report", "thesis", "manuscript":
			it["publisher"] = pick(publishers)
			if rng.Intn(2) == 0 {
				it["publisher-place"] = pick(places)
			}
			if typ == "book" && rng.Intn(3) == 0 {
				it["edition"] = fmt.Sprint(2 + rng.Intn(3))
			}
			if typ == "report" {
				it["number"] = fmt.Sprintf("TR-%d", 100+rng.Intn(900))
				it["genre"] = "Technical report"
			}
			if typ == "thesis" {
				it["genre"] = []string{"PhD thesis", "Master's thesis"}[rng.Intn(2)]
				it["publisher"] = "University of " + pick(places)
			}
			if rng.Intn(4) == 0 {
				it["editor"] = []map[string]any{person()}
			}
		case "chapter", "entry-encyclopedia":
			it["container-title"] = upperFirst("Handbook of " + pick(topics))
			it["editor"] = []map[string]any{person(), person()}
			it["publisher"] = pick(publishers)
			it["publisher-place"] = pick(places)
			p := 1 + rng.Intn(400)
			it["page"] = fmt.Sprintf("%d-%d", p, p+20)
		case "webpage", "post-weblog":
			it["container-title"] = "The Synthetic Blog"
			it["URL"] = fmt.Sprintf("https://example.org/posts/%d", i+1)
			it["accessed"] = map[string]any{"date-parts": [][]int{{2024, 3, 1 + i%28}}}
		case "article":
			it["container-title"] = "arXiv"
			it["number"] = fmt.Sprintf("arXiv:%02d%02d.%05d", 15+rng.Intn(10), 1+rng.Intn(12), rng.Intn(99999))
			it["URL"] = fmt.Sprintf("https://arxiv.org/abs/%d.%05d", 2000+rng.Intn(500), rng.Intn(99999))
			it["publisher"] = "arXiv"
		case "dataset", "software":
			it["publisher"] = "Zenodo"
			it["version"] = fmt.Sprintf("%d.%d", 1+rng.Intn(3), rng.Intn(10))
			it["DOI"] = doi
		case "patent":
			it["number"] = fmt.Sprintf("US %d", 1000000+rng.Intn(9000000))
			it["authority"] = "U.S. Patent and Trademark Office"
		case "speech", "interview", "broadcast", "motion_picture", "map":
			it["publisher"] = pick(publishers)
			it["event"] = "Synthetic Symposium"
			it["medium"] = "Video"
		case "legal_case":
			it["authority"] = "Supreme Court"
			it["container-title"] = "U.S."
			it["volume"] = fmt.Sprint(100 + rng.Intn(400))
			it["page"] = fmt.Sprint(1 + rng.Intn(900))
		}
		if rng.Intn(8) == 0 {
			delete(it, "title") // a missing title
		}
		if rng.Intn(6) == 0 && it["URL"] == nil {
			it["URL"] = fmt.Sprintf("https://example.com/paper/%d", i+1)
		}
		b, err := json.Marshal(it)
		if err != nil {
			panic(err)
		}
		out = append(out, b)
	}
	return out
}
