package lsa

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/citefind/citefind/internal/modelfile"
)

// Model file layout, little-endian throughout:
//
//	magic      8 bytes "citefLSA"
//	version    uint32 (fileVersion)
//	dim        uint32   k
//	terms      uint32   vocabulary size n
//	docs       uint64   training documents
//	minDF, maxVocab, oversample, powerIters  uint32 each
//	seed       int64
//	maxDFRatio float64
//	fold       uint8 length + bytes
//	vocab      n × (uvarint length + UTF-8 bytes), sorted, distinct
//	idf        n × float64
//	sigma      k × float64
//	vectors    n·k × float32, row-major (term rows)
//	checksum   SHA-256 of everything above
//
// internal/modelfile writes and reads the header (magic, version, dim)
// and the checksum.
const (
	fileMagic   = "citefLSA"
	fileVersion = 1
	maxTermLen  = 1 << 12
)

// format is the header and checksum of an LSA model file.
var format = modelfile.Format{Magic: fileMagic, Version: fileVersion, Kind: "an LSA model", Corrupt: ErrCorrupt}

// Save writes the model in its binary form (see Load).
func (m *Model) Save(w io.Writer) error {
	if err := format.Write(w, m.opts.Dim, m.writeBody); err != nil {
		return fmt.Errorf("lsa save: %w", err)
	}
	return nil
}

// hash returns the hex SHA-256 of the model's file body.
func (m *Model) hash() string { return format.Hash(m.opts.Dim, m.writeBody) }

// writeBody writes the file body after the header (magic, version, dim).
func (m *Model) writeBody(e *modelfile.Encoder) {
	o := m.opts
	e.U32(uint32(len(m.vocab)))
	e.U64(uint64(m.docs))
	for _, x := range []int{o.MinDF, o.MaxVocab, o.Oversample, o.PowerIters} {
		e.U32(uint32(x))
	}
	e.U64(uint64(o.Seed))
	e.U64(math.Float64bits(o.MaxDFRatio))
	e.Byte(byte(len(o.Fold)))
	e.String(string(o.Fold))
	e.Terms(m.vocab)
	e.Float64s(m.idf)
	e.Float64s(m.sigma)
	e.Float32s(m.v)
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
		return nil, fmt.Errorf("lsa load: %w", err)
	}
	return m, nil
}

func load(rd io.Reader) (*Model, error) {
	r, dim, err := format.NewReader(rd)
	if err != nil {
		return nil, err
	}
	var hdr [8]uint64 // terms, docs, minDF, maxVocab, oversample, powerIters, seed, maxDFRatio
	for i := range hdr {
		switch i {
		case 1, 6, 7: // docs, seed, maxDFRatio
			hdr[i], err = r.U64()
		default:
			var x uint32
			x, err = r.U32()
			hdr[i] = uint64(x)
		}
		if err != nil {
			return nil, err
		}
	}
	terms := int(hdr[0])
	if dim < 1 || dim > maxDim || terms < 1 || terms > maxTerms || hdr[1] > math.MaxInt32 {
		return nil, fmt.Errorf("%w: bad sizes (dim %d, terms %d, docs %d)", ErrCorrupt, dim, terms, hdr[1])
	}
	o := Options{Dim: dim, MinDF: int(int32(hdr[2])), MaxVocab: int(int32(hdr[3])),
		Oversample: int(int32(hdr[4])), PowerIters: int(int32(hdr[5])),
		Seed: int64(hdr[6]), MaxDFRatio: math.Float64frombits(hdr[7])}
	flen, err := r.ReadByte()
	if err != nil {
		return nil, err
	}
	fold, err := r.Bytes(int(flen))
	if err != nil {
		return nil, err
	}
	o.Fold = Fold(fold)
	if !o.Fold.valid() {
		return nil, fmt.Errorf("%w: unknown fold %q", ErrCorrupt, fold)
	}
	m := &Model{opts: o, docs: int(hdr[1])}
	// The reader grows slices as data arrives, so that a corrupt size
	// cannot make Load allocate more than the file holds.
	if m.vocab, err = r.Terms(terms, maxTermLen); err != nil {
		return nil, err
	}
	if m.idf, err = r.Float64s(terms, true); err != nil {
		return nil, err
	}
	if m.sigma, err = r.Float64s(dim, true); err != nil {
		return nil, err
	}
	if !slices.IsSortedFunc(m.sigma, func(a, b float64) int { return cmp.Compare(b, a) }) || m.sigma[dim-1] < 0 {
		return nil, fmt.Errorf("%w: singular values not descending and non-negative", ErrCorrupt)
	}
	if m.v, err = r.Float32s(terms*dim, false); err != nil { // vectors: not checked for finite values
		return nil, err
	}
	if err := r.Verify(); err != nil {
		return nil, err
	}
	m.finish()
	return m, nil
}

// ModelID returns the Model() identity of the model file at path without
// loading it: the dimension from the header and the checksum Save appends
// (the SHA-256 of the file body, which the identity is made of). It reads
// 20 bytes at the start and 32 at the end, so it is cheap for a 70 MB
// model; it does not verify the checksum (Load does). A file too short to
// be a model, or without the magic, gives an error wrapping ErrCorrupt.
func ModelID(path string) (string, error) {
	dim, sum, err := format.Identity(path)
	if err != nil {
		return "", fmt.Errorf("lsa model id: %w", err)
	}
	return fmt.Sprintf("lsa-%d@%s", dim, sum[:12]), nil
}
