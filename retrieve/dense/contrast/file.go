package contrast

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/citefind/citefind/internal/atomicfile"
	"github.com/citefind/citefind/internal/modelfile"
)

// Model file layout, little-endian throughout:
//
//	magic       8 bytes "citefCTR"
//	version     uint32 (fileVersion)
//	dim         uint32
//	terms       uint32   vocabulary size n
//	buckets     uint32   bigram buckets
//	docs        uint64   training papers
//	minDF, maxVocab, epochs, minSteps, batch, heads  uint32 each
//	flags       uint8: 1 OneWay, 2 Decay, 4 Spans, 8 Init is InitLSA, 16 Neighbours, 32 Average
//	seed        uint64
//	maxDFRatio, temperature, lr, initScale, overlap   float64 each
//	vocab       n × (uvarint length + UTF-8 bytes), sorted, distinct
//	idf         (n + buckets) × float32
//	projection  (n + buckets)·dim × float32, row-major (feature rows)
//	checksum    SHA-256 of everything above
//
// internal/modelfile writes and reads the header (magic, version, dim)
// and the checksum.
const (
	fileMagic   = "citefCTR"
	fileVersion = 1
	maxTermLen  = 1 << 12
)

// format is the header and checksum of a contrast model file.
var format = modelfile.Format{Magic: fileMagic, Version: fileVersion, Kind: "a contrast model", Corrupt: ErrCorrupt}

// Save writes the model in its binary form (see Load).
func (m *Model) Save(w io.Writer) error {
	if err := format.Write(w, m.opts.Dim, m.writeBody); err != nil {
		return fmt.Errorf("contrast save: %w", err)
	}
	return nil
}

// hash returns the hex SHA-256 of the model's file body.
func (m *Model) hash() string { return format.Hash(m.opts.Dim, m.writeBody) }

// writeBody writes the file body after the header (magic, version, dim).
func (m *Model) writeBody(e *modelfile.Encoder) {
	o := m.opts
	e.U32(uint32(len(m.f.vocab)))
	e.U32(uint32(m.f.buckets))
	e.U64(uint64(m.docs))
	for _, x := range []int{o.MinDF, o.MaxVocab, o.Epochs, o.MinSteps, o.Batch, o.Heads} {
		e.U32(uint32(int32(x)))
	}
	var flags byte
	for i, f := range []bool{o.OneWay, o.Decay, o.Spans, o.Init == InitLSA, o.Neighbours, o.Average} {
		if f {
			flags |= 1 << i
		}
	}
	e.Byte(flags)
	e.U64(o.Seed)
	e.Float64s([]float64{o.MaxDFRatio, o.Temperature, o.LR, o.InitScale, o.Overlap})
	e.Terms(m.f.vocab)
	e.Float32s(m.f.idf)
	e.Float32s(m.w)
}

// Load reads a model written by Save. A file that is not a model, is
// truncated, fails its checksum or holds inconsistent values gives an
// error wrapping ErrCorrupt.
func Load(r io.Reader) (*Model, error) {
	m, err := load(r)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: truncated", ErrCorrupt)
		}
		return nil, fmt.Errorf("contrast load: %w", err)
	}
	return m, nil
}

func load(rd io.Reader) (*Model, error) {
	r, dim, err := format.NewReader(rd)
	if err != nil {
		return nil, err
	}
	h, err := readHead(r, dim)
	if err != nil {
		return nil, err
	}
	o, terms, buckets := h.opts, h.terms, h.buckets
	// The reader grows slices as data arrives, so that a corrupt size
	// cannot make Load allocate more than the file holds.
	vocab, err := r.Terms(terms, maxTermLen)
	if err != nil {
		return nil, err
	}
	size := terms + buckets
	idf, err := r.Float32s(size, true)
	if err != nil {
		return nil, err
	}
	w, err := r.Float32s(size*dim, true)
	if err != nil {
		return nil, err
	}
	if err := r.Verify(); err != nil {
		return nil, err
	}
	m := &Model{opts: o, docs: int(h.docs), f: newFeatures(vocab, buckets, idf), w: w}
	m.finish()
	return m, nil
}

// head is what a model file holds before its vocabulary.
type head struct {
	opts           Options // with defaults applied
	terms, buckets int
	docs           uint64
}

// readHead reads and checks the sizes and options at the start of a
// model file's body.
func readHead(r *modelfile.Reader, dim int) (head, error) {
	var u [8]uint32 // terms, buckets, minDF, maxVocab, epochs, minSteps, batch, heads
	var docs uint64
	var err error
	for i := range u {
		if i == 2 {
			if docs, err = r.U64(); err != nil {
				return head{}, err
			}
		}
		if u[i], err = r.U32(); err != nil {
			return head{}, err
		}
	}
	terms, buckets := int(u[0]), int(u[1])
	if dim < 1 || dim > maxDim || terms < 1 || terms > maxFeatures || buckets > maxFeatures || docs > math.MaxInt32 {
		return head{}, fmt.Errorf("%w: bad sizes (dim %d, terms %d, buckets %d, docs %d)", ErrCorrupt, dim, terms, buckets, docs)
	}
	flags, err := r.ReadByte()
	if err != nil {
		return head{}, err
	}
	seed, err := r.U64()
	if err != nil {
		return head{}, err
	}
	fl, err := r.Float64s(5, false) // checked by withDefaults below
	if err != nil {
		return head{}, err
	}
	o := Options{Dim: dim, MinDF: int(u[2]), MaxVocab: int(u[3]), Epochs: int(u[4]), MinSteps: int(int32(u[5])), Batch: int(u[6]), Heads: int(u[7]),
		OneWay: flags&1 != 0, Decay: flags&2 != 0, Spans: flags&4 != 0, Neighbours: flags&16 != 0, Average: flags&32 != 0, Init: InitRandom, Seed: seed, MaxDFRatio: fl[0], Temperature: fl[1], LR: fl[2], InitScale: fl[3], Overlap: fl[4], Bigrams: buckets}
	if buckets == 0 {
		o.Bigrams = -1
	}
	if flags&8 != 0 {
		o.Init = InitLSA
	}
	want := o
	o, err = o.withDefaults()
	stored := o
	stored.Workers = 0 // not in the file: it does not change the model
	if err != nil || flags > 63 || stored != want {
		return head{}, fmt.Errorf("%w: bad options (%v)", ErrCorrupt, err)
	}
	return head{opts: o, terms: terms, buckets: buckets, docs: docs}, nil
}

// SaveFile writes m to path atomically (internal/atomicfile: a temporary
// file in the same folder, synced, renamed into place, and the folder
// synced), so that path holds either the old or the new model after a
// crash. The file's permissions are 0644 less the umask; errors name path.
func SaveFile(path string, m *Model) error {
	return atomicfile.Write(path, 0o644, func(f *os.File) error { return m.Save(f) })
}

// LoadFile reads the model at path. When specs are given (and not ""),
// the model must have been trained for one of those feature sets and
// dimensions (Options.Spec, Model.Spec): another one gives an error
// wrapping ErrMismatch that names its spec and the first of specs. Errors
// name the file.
func LoadFile(path string, specs ...string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load embedder model: %w", err)
	}
	defer f.Close()
	m, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := checkSpec(path, m.Spec(), specs); err != nil {
		return nil, err
	}
	return m, nil
}

// checkSpec returns nil when specs is empty, "" or holds spec, else an
// ErrMismatch naming path, spec and the first of specs.
func checkSpec(path, spec string, specs []string) error {
	if len(specs) == 0 || slices.Contains(specs, "") || slices.Contains(specs, spec) {
		return nil
	}
	return fmt.Errorf("%s: %w: it has %s, want %s (retrain it)", path, ErrMismatch, spec, specs[0])
}

// FileSpec returns the Spec of the model file at path, read from the
// start of the file without loading the model (nor verifying its
// checksum, which Load does).
func FileSpec(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("contrast model spec: %w", err)
	}
	defer f.Close()
	r, dim, err := format.NewReader(bufio.NewReaderSize(f, 512))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	h, err := readHead(r, dim)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: truncated", ErrCorrupt)
		}
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return h.opts.Spec(), nil
}

// ModelID returns the Model() identity of the model file at path without
// loading it: the dimension from the header and the checksum Save appends
// (the SHA-256 of the file body, which the identity is made of). It does
// not verify the checksum (Load does). A file too short to be a model, or
// without the magic, gives an error wrapping ErrCorrupt.
func ModelID(path string) (string, error) {
	dim, sum, err := format.Identity(path)
	if err != nil {
		return "", fmt.Errorf("contrast model id: %w", err)
	}
	return fmt.Sprintf("contrast-%d@%s", dim, sum[:12]), nil
}
