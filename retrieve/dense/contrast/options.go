package contrast

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
)

// Defaults used for the zero values of Options fields.
const (
	DefaultDim         = 768
	DefaultMinDF       = 1
	DefaultMaxDFRatio  = 0.5
	DefaultMaxVocab    = 200_000
	DefaultBigrams     = 32768
	DefaultEpochs      = 6
	DefaultMinSteps    = 300
	DefaultBatch       = 1024
	DefaultTemperature = 0.05
	DefaultLR          = 2e-3
	DefaultInitScale   = 0.02
	DefaultSeed        = 1
)

// Errors callers can act on.
var (
	// ErrTooSmall is returned by Train when the papers give fewer training
	// pairs than MinPairs: too few papers with a title and an abstract (or
	// keywords) to learn from.
	ErrTooSmall = errors.New("too few papers to learn from")
	// ErrCorrupt is returned by Load for a file that is not a model of
	// this package or whose checksum does not match.
	ErrCorrupt = errors.New("corrupt model file")
	// ErrMismatch is returned by LoadFile when the model was trained for
	// another feature set or dimension than the one asked for.
	ErrMismatch = errors.New("model trained for another feature set")
)

// ModelFile is the name suggested for a database's model file.
const ModelFile = "contrast.model"

// MinPairs is the least number of training pairs Train accepts.
const MinPairs = 32

// Options configure Train. The zero value trains the default model.
type Options struct {
	// Dim is the embedding dimension; 0 means DefaultDim. A multiple of 8
	// uses the fast kernels.
	Dim int
	// MinDF drops terms found in fewer papers; 0 means DefaultMinDF.
	MinDF int
	// MaxDFRatio drops terms found in more than this share of the papers,
	// in (0, 1]; 0 means DefaultMaxDFRatio, 1 keeps them all.
	MaxDFRatio float64
	// MaxVocab keeps at most this many terms (those in most papers, ties
	// by term); 0 means DefaultMaxVocab.
	MaxVocab int
	// Bigrams is the number of buckets word bigrams are hashed into
	// (features besides the unigrams); 0 means DefaultBigrams, negative
	// means none (-1 once defaults are applied). Bigrams lower the
	// embedder's recall alone on some collections but make it add more
	// to BM25 on every collection measured (docs/dense.md).
	Bigrams int
	// Epochs is the number of passes over the papers (one training pair
	// per paper and pass); 0 means DefaultEpochs.
	Epochs int
	// MinSteps raises the number of epochs of a small collection until
	// training takes at least this many batches; 0 means
	// DefaultMinSteps, negative means no minimum.
	MinSteps int
	// Batch is the number of pairs per step, whose other pairs are each
	// pair's negatives; 0 means DefaultBatch. It is lowered to the number
	// of pairs of a small collection.
	Batch int
	// Temperature divides the cosine similarities before the softmax; 0
	// means DefaultTemperature.
	Temperature float64
	// LR is Adam's learning rate; 0 means DefaultLR.
	LR float64
	// InitScale is the standard deviation of the random initial
	// projection; 0 means DefaultInitScale.
	InitScale float64
	// Decay warms the learning rate up linearly over the first 2% of the
	// steps and decays it linearly to zero over the rest; by default it is
	// constant.
	Decay bool
	// Spans adds a fourth kind of training pair: two or three sentences
	// in a row of an abstract ↔ the title and the other sentences.
	Spans bool
	// Init chooses the initial projection: InitRandom (or "") or InitLSA.
	Init Init
	// Heads splits the Dim dimensions into this many blocks, each trained
	// as a model of its own (normalised and scored on its own) on the same
	// batches; the embedding is their concatenation, so that its cosine is
	// the mean of theirs: an ensemble at the cost of one model. 0 means 1.
	// Dim must be a multiple of Heads.
	Heads int
	// Average makes the model the mean of the projections at the end of
	// each epoch of the second half of training (stochastic weight
	// averaging), rather than the last one.
	Average bool
	// Overlap is the probability with which a term of a pair's short side
	// is removed from its long side, so that the pair cannot be matched
	// on shared words alone; 0 removes none.
	Overlap float64
	// Neighbours composes the batches so that most papers share theirs
	// with their hardest lexical negative: the paper whose text the
	// paper's title matches best by tf-idf (near duplicates excluded).
	Neighbours bool
	// OneWay keeps only the query→paper half of the loss; by default it
	// is symmetric (each pair's paper must also find its query).
	OneWay bool
	// Seed seeds the initial projection and the sampling of pairs; 0
	// means DefaultSeed. The same papers, options and seed give the same
	// model on one machine.
	Seed uint64
	// Workers is the number of goroutines; 0 means GOMAXPROCS. It does
	// not change the result.
	Workers int
}

func (o Options) withDefaults() (Options, error) {
	def := func(x *int, d int) {
		if *x == 0 {
			*x = d
		}
	}
	deff := func(x *float64, d float64) {
		if *x == 0 {
			*x = d
		}
	}
	def(&o.Dim, DefaultDim)
	def(&o.MinDF, DefaultMinDF)
	def(&o.MaxVocab, DefaultMaxVocab)
	def(&o.Epochs, DefaultEpochs)
	def(&o.MinSteps, DefaultMinSteps)
	def(&o.Batch, DefaultBatch)
	def(&o.Heads, 1)
	deff(&o.MaxDFRatio, DefaultMaxDFRatio)
	deff(&o.Temperature, DefaultTemperature)
	deff(&o.LR, DefaultLR)
	deff(&o.InitScale, DefaultInitScale)
	// "none" stays negative, so that withDefaults is idempotent
	if o.Bigrams == 0 {
		o.Bigrams = DefaultBigrams
	}
	if o.Bigrams <= 0 {
		o.Bigrams = -1
	}
	if o.MinSteps < 0 {
		o.MinSteps = -1
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Init == "" {
		o.Init = InitRandom
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case o.Dim < 1 || o.Dim > maxDim:
		return o, fmt.Errorf("contrast: Dim %d out of range [1, %d]", o.Dim, maxDim)
	case o.MinDF < 1:
		return o, fmt.Errorf("contrast: MinDF %d below 1", o.MinDF)
	case !(o.MaxDFRatio > 0 && o.MaxDFRatio <= 1):
		return o, fmt.Errorf("contrast: MaxDFRatio %v out of range (0, 1]", o.MaxDFRatio)
	case o.MaxVocab < 1 || o.MaxVocab > maxFeatures:
		return o, fmt.Errorf("contrast: MaxVocab %d out of range [1, %d]", o.MaxVocab, maxFeatures)
	case o.Bigrams > maxFeatures:
		return o, fmt.Errorf("contrast: Bigrams %d above %d", o.Bigrams, maxFeatures)
	case o.Heads < 1 || o.Dim%o.Heads != 0:
		return o, fmt.Errorf("contrast: Dim %d is not a multiple of Heads %d", o.Dim, o.Heads)
	case o.Epochs < 1 || o.Batch < 2:
		return o, fmt.Errorf("contrast: Epochs %d or Batch %d too small", o.Epochs, o.Batch)
	case !(o.Overlap >= 0 && o.Overlap <= 1):
		return o, fmt.Errorf("contrast: Overlap %v out of range [0, 1]", o.Overlap)
	case o.Init != InitRandom && o.Init != InitLSA:
		return o, fmt.Errorf("contrast: unknown Init %q (want %q or %q)", o.Init, InitRandom, InitLSA)
	case !(o.Temperature > 0) || !(o.LR > 0) || !(o.InitScale > 0):
		return o, fmt.Errorf("contrast: Temperature %v, LR %v and InitScale %v must be positive", o.Temperature, o.LR, o.InitScale)
	}
	return o, nil
}

// Init is how the projection is initialised.
type Init string

// Initialisations.
const (
	// InitRandom draws every entry from N(0, InitScale²).
	InitRandom Init = "random"
	// InitLSA starts from LSA (package lsa, Dim dimensions, trained on
	// the same papers first, which Train then reads twice): a term's row
	// is its LSA vector, scaled so that the rows' mean length is that of
	// a random row; terms LSA does not have and bigram buckets start at
	// random. The model then embeds a text as LSA does, before training.
	InitLSA Init = "lsa"
)

// Specs of the defaults' models.
const (
	// DefaultSpec is Options{}.Spec(): what databases train.
	DefaultSpec = "uni+bi32768/768"
	// EarlierDefaultSpec is the Spec of the models the earlier defaults
	// trained (unigrams only): a database indexed with one keeps answering
	// queries with it until `citefind index` retrains it with the defaults.
	EarlierDefaultSpec = "uni/768"
)

// Size limits, also the sanity limits of Load.
const (
	maxDim      = 4096
	maxFeatures = 1 << 24
)

// Spec names the feature set and dimension a model trained with o has:
// "uni/768" for unigrams, "uni+bi32768/768" with 32,768 bigram buckets
// (the default), "uni/768x2" with two heads.
// (The vocabulary itself depends on the papers.)
func (o Options) Spec() string {
	o, _ = o.withDefaults()
	s := "uni"
	if o.Bigrams > 0 {
		s += "+bi" + strconv.Itoa(o.Bigrams)
	}
	s += "/" + strconv.Itoa(o.Dim)
	if o.Heads > 1 {
		s += "x" + strconv.Itoa(o.Heads)
	}
	return s
}
