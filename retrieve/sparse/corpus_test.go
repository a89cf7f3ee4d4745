package sparse_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/citefind/citefind/corpus"
)

// Synthetic but realistic paper records: a Zipfian vocabulary whose head is
// real English (mostly IR/ML) words, with inflected variants that the
// stemmer folds together, and whose tail is pronounceable pseudo-words, as
// in real abstracts (names, acronyms, rare terms). Stop words are mixed in
// at about the rate of real prose. The Zipf offset (v=30) stands for the
// ranks that stop words take in real text, so the most frequent content
// words occur in about a third of the abstracts, as in real collections.

var headWords = strings.Fields(`
retrieval retrieve retrieved retrieving model models modeling modelled
learning learn learned learns neural network networks query queries querying
document documents ranking rank ranked ranks search searching searched
user users evaluation evaluate evaluated evaluating data dataset datasets
method methods approach approaches results result performance perform
performs performed system systems information relevance relevant feedback
propose proposed proposes proposing paper papers task tasks train training
trained representation representations embedding embeddings semantic
semantics language languages text texts word words sentence sentences
citation citations recommendation recommendations recommend recommended
graph graphs node nodes edge edges knowledge entity entities attention
transformer transformers pretrained fine tuning tuned tune benchmark
benchmarks experiment experiments experimental show shows showed shown
improve improves improved improvement improvements significant significantly
effective effectiveness efficient efficiency large scale small study studies
studied analysis analyze analyzed analyzing analyses framework frameworks
novel new existing previous prior work works working based baseline baselines
state art outperform outperforms outperformed accuracy precision recall metric
metrics measure measures measured collection collections corpus corpora index
indexing indexed inverted term terms frequency frequencies weighting weight
weights weighted probabilistic probability probabilities distribution
distributions sparse dense vector vectors space spaces similarity similar
score scores scoring function functions loss objective optimization optimize
optimized optimizing gradient algorithm algorithms problem problems solution
solutions challenge challenges context contexts contextual session sessions
click clicks behavior behaviour interaction interactions interface interfaces
visual image images video videos multimedia social media online web page
pages link links content generation generate generated generating summary
summaries summarization question questions answer answers answering
conversational dialogue agent agents domain domains transfer cross lingual
multilingual topic topics cluster clusters clustering classification classify
classifier classifiers label labels labeled supervised unsupervised
reinforcement policy policies reward rewards online offline bias biases
fairness fair privacy secure security robust robustness adversarial attack
attacks noise noisy signal signals temporal time times dynamic dynamics
stream streaming real world application applications practical industry
e-commerce product products item items collaborative filtering matrix
factorization latent factor factors sequential sequence sequences recurrent
convolutional layer layers deep shallow architecture architectures encoder
decoder encoders memory efficient fast faster speed latency cost costs
expensive cheap hardware parallel distributed scalable scalability
`)

var stopWords = strings.Fields(`the of and a in to is for we that with on
this are by as an be from which our it at these can also such its their
has have than not or been between both`)

// vocab is the head words followed by pseudo-words up to n terms.
func vocab(n int) []string {
	out := append([]string(nil), headWords...)
	cons := []string{"b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr"}
	vows := []string{"a", "e", "i", "o", "u", "ai", "ou"}
	for i := 0; len(out) < n; i++ {
		var b strings.Builder
		x := i
		for s := 0; s < 3 || x > 0; s++ {
			b.WriteString(cons[x%len(cons)])
			x /= len(cons)
			b.WriteString(vows[x%len(vows)])
			x /= len(vows)
		}
		out = append(out, b.String())
	}
	return out
}

type gen struct {
	r     *rand.Rand
	words []string
	zipf  *rand.Zipf
}

func newGen(seed uint64, vocabSize int) *gen {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	w := vocab(vocabSize)
	return &gen{r: r, words: w, zipf: rand.NewZipf(r, 1.05, 30, uint64(len(w)-1))}
}

func (g *gen) word() string {
	if g.r.IntN(100) < 35 {
		return stopWords[g.r.IntN(len(stopWords))]
	}
	w := g.words[g.zipf.Uint64()]
	switch g.r.IntN(40) {
	case 0:
		return strings.ToUpper(w[:1]) + w[1:]
	case 1:
		return w + "'s"
	}
	return w
}

// text returns n words as sentences of 8 to 24 words.
func (g *gen) text(n int) string {
	var b strings.Builder
	left := 0
	for i := range n {
		if left == 0 {
			if i > 0 {
				b.WriteString(". ")
			}
			left = 8 + g.r.IntN(17)
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(g.word())
		left--
	}
	b.WriteByte('.')
	return b.String()
}

func (g *gen) paper(i int) corpus.Paper {
	p := corpus.Paper{
		ID:    fmt.Sprintf("10.1145/%07d", i),
		Title: strings.TrimSuffix(g.text(5+g.r.IntN(9)), "."),
	}
	if g.r.IntN(20) != 0 {
		p.Abstract = g.text(100 + g.r.IntN(160))
	}
	if g.r.IntN(10) < 7 {
		for range 2 + g.r.IntN(4) {
			p.Keywords = append(p.Keywords, strings.TrimSuffix(g.text(1+g.r.IntN(3)), "."))
		}
	}
	return p
}

// papers returns n generated papers from a fixed seed.
func papers(seed uint64, n, vocabSize int) []corpus.Paper {
	g := newGen(seed, vocabSize)
	out := make([]corpus.Paper, n)
	for i := range out {
		out[i] = g.paper(i)
	}
	return out
}

// queries returns n queries of the given word length.
func queries(seed uint64, n, words, vocabSize int) []string {
	g := newGen(seed, vocabSize)
	out := make([]string, n)
	for i := range out {
		out[i] = g.text(words)
	}
	return out
}

// iter turns a slice into Build's pull iterator.
func iter(ps []corpus.Paper) func() (corpus.Paper, bool, error) {
	i := 0
	return func() (corpus.Paper, bool, error) {
		if i >= len(ps) {
			return corpus.Paper{}, false, nil
		}
		i++
		return ps[i-1], true, nil
	}
}
