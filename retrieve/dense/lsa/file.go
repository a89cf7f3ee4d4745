package lsa

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"slices"
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
const (
	fileMagic   = "citefLSA"
	fileVersion = 1
	maxTermLen  = 1 << 12
)

// Save writes the model in its binary form (see Load).
func (m *Model) Save(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	h := sha256.New()
	if err := m.writeTo(io.MultiWriter(bw, h)); err != nil {
		return fmt.Errorf("lsa save: %w", err)
	}
	if _, err := bw.Write(h.Sum(nil)); err != nil {
		return fmt.Errorf("lsa save: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lsa save: %w", err)
	}
	return nil
}

// hash returns the hex SHA-256 of the model's file body.
func (m *Model) hash() string {
	h := sha256.New()
	bw := bufio.NewWriterSize(h, 1<<16)
	_ = m.writeTo(bw) // a hash never fails
	_ = bw.Flush()
	return hex.EncodeToString(h.Sum(nil))
}

// writeTo writes the file body (all but the checksum).
func (m *Model) writeTo(w io.Writer) error {
	o := m.opts
	b := make([]byte, 0, 1<<16)
	b = append(b, fileMagic...)
	b = binary.LittleEndian.AppendUint32(b, fileVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(o.Dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.vocab)))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.docs))
	for _, x := range []int{o.MinDF, o.MaxVocab, o.Oversample, o.PowerIters} {
		b = binary.LittleEndian.AppendUint32(b, uint32(x))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(o.Seed))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(o.MaxDFRatio))
	b = append(b, byte(len(o.Fold)))
	b = append(b, o.Fold...)
	flush := func(force bool) error {
		if len(b) < 1<<15 && !force {
			return nil
		}
		_, err := w.Write(b)
		b = b[:0]
		return err
	}
	for _, t := range m.vocab {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		if err := flush(false); err != nil {
			return err
		}
	}
	for _, xs := range [][]float64{m.idf, m.sigma} {
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
			if err := flush(false); err != nil {
				return err
			}
		}
	}
	for _, x := range m.v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		if err := flush(false); err != nil {
			return err
		}
	}
	return flush(true)
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

type loader struct {
	r   *bufio.Reader // the file
	h   hash.Hash     // checksum of what was read through the loader
	buf [8]byte
}

func (l *loader) read(n int) ([]byte, error) {
	b := l.buf[:n]
	if _, err := io.ReadFull(l.r, b); err != nil {
		return nil, err
	}
	l.h.Write(b)
	return b, nil
}

func (l *loader) u32() (uint32, error) {
	b, err := l.read(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (l *loader) u64() (uint64, error) {
	b, err := l.read(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

func (l *loader) ReadByte() (byte, error) {
	b, err := l.read(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func load(r io.Reader) (*Model, error) {
	l := &loader{r: bufio.NewReaderSize(r, 1<<16), h: sha256.New()}
	magic := make([]byte, len(fileMagic))
	if _, err := io.ReadFull(l.r, magic); err != nil {
		return nil, err
	}
	l.h.Write(magic)
	if string(magic) != fileMagic {
		return nil, fmt.Errorf("%w: not an LSA model (magic %q)", ErrCorrupt, magic)
	}
	var hdr [10]uint64
	for i := range hdr {
		var err error
		switch i {
		case 3, 8, 9: // docs, seed, maxDFRatio
			hdr[i], err = l.u64()
		default:
			var x uint32
			x, err = l.u32()
			hdr[i] = uint64(x)
		}
		if err != nil {
			return nil, err
		}
	}
	if hdr[0] != fileVersion {
		return nil, fmt.Errorf("%w: unsupported version %d (want %d)", ErrCorrupt, hdr[0], fileVersion)
	}
	// hdr: version, dim, terms, docs, minDF, maxVocab, oversample, powerIters, seed, maxDFRatio
	dim, terms := int(hdr[1]), int(hdr[2])
	if dim < 1 || dim > maxDim || terms < 1 || terms > maxTerms || hdr[3] > math.MaxInt32 {
		return nil, fmt.Errorf("%w: bad sizes (dim %d, terms %d, docs %d)", ErrCorrupt, dim, terms, hdr[3])
	}
	o := Options{Dim: dim, MinDF: int(int32(hdr[4])), MaxVocab: int(int32(hdr[5])),
		Oversample: int(int32(hdr[6])), PowerIters: int(int32(hdr[7])),
		Seed: int64(hdr[8]), MaxDFRatio: math.Float64frombits(hdr[9])}
	flen, err := l.ReadByte()
	if err != nil {
		return nil, err
	}
	fold := make([]byte, flen)
	if _, err := io.ReadFull(l.r, fold); err != nil {
		return nil, err
	}
	l.h.Write(fold)
	o.Fold = Fold(fold)
	if !o.Fold.valid() {
		return nil, fmt.Errorf("%w: unknown fold %q", ErrCorrupt, fold)
	}
	m := &Model{opts: o, docs: int(hdr[3])}
	// Grow slices as data arrives so that a corrupt size cannot make Load
	// allocate more than the file holds.
	m.vocab = make([]string, 0, min(terms, 1<<16))
	for range terms {
		n, err := binary.ReadUvarint(l)
		if err != nil {
			return nil, err
		}
		if n == 0 || n > maxTermLen {
			return nil, fmt.Errorf("%w: bad term length %d", ErrCorrupt, n)
		}
		t := make([]byte, n)
		if _, err := io.ReadFull(l.r, t); err != nil {
			return nil, err
		}
		l.h.Write(t)
		if k := len(m.vocab); k > 0 && !(m.vocab[k-1] < string(t)) {
			return nil, fmt.Errorf("%w: vocabulary not sorted at term %d", ErrCorrupt, k)
		}
		m.vocab = append(m.vocab, string(t))
	}
	if m.idf, err = l.float64s(terms); err != nil {
		return nil, err
	}
	if m.sigma, err = l.float64s(dim); err != nil {
		return nil, err
	}
	if !slices.IsSortedFunc(m.sigma, func(a, b float64) int { return cmp.Compare(b, a) }) || m.sigma[dim-1] < 0 {
		return nil, fmt.Errorf("%w: singular values not descending and non-negative", ErrCorrupt)
	}
	if m.v, err = l.float32s(terms * dim); err != nil {
		return nil, err
	}
	sum := make([]byte, sha256.Size)
	if _, err := io.ReadFull(l.r, sum); err != nil {
		return nil, err
	}
	if !bytes.Equal(sum, l.h.Sum(nil)) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	m.finish()
	return m, nil
}

const chunk = 1 << 14

func (l *loader) float64s(n int) ([]float64, error) {
	out := make([]float64, 0, min(n, chunk))
	buf := make([]byte, 8*chunk)
	for len(out) < n {
		c := min(chunk, n-len(out))
		b := buf[:8*c]
		if _, err := io.ReadFull(l.r, b); err != nil {
			return nil, err
		}
		l.h.Write(b)
		for i := range c {
			x := math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: non-finite value", ErrCorrupt)
			}
			out = append(out, x)
		}
	}
	return out, nil
}

func (l *loader) float32s(n int) ([]float32, error) {
	out := make([]float32, 0, min(n, chunk))
	buf := make([]byte, 4*chunk)
	for len(out) < n {
		c := min(chunk, n-len(out))
		b := buf[:4*c]
		if _, err := io.ReadFull(l.r, b); err != nil {
			return nil, err
		}
		l.h.Write(b)
		for i := range c {
			out = append(out, math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		}
	}
	return out, nil
}

// ModelID returns the Model() identity of the model file at path without
// loading it: the dimension from the header and the checksum Save appends
// (the SHA-256 of the file body, which the identity is made of). It reads
// 20 bytes at the start and 32 at the end, so it is cheap for a 70 MB
// model; it does not verify the checksum (Load does). A file too short to
// be a model, or without the magic, gives an error wrapping ErrCorrupt.
func ModelID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("lsa model id: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("lsa model id: %w", err)
	}
	const head = len(fileMagic) + 8 // magic, version, dim
	if fi.Size() < int64(head+sha256.Size) {
		return "", fmt.Errorf("lsa model id: %w: %s is too short", ErrCorrupt, path)
	}
	var hb [head]byte
	var sum [sha256.Size]byte
	if _, err := f.ReadAt(hb[:], 0); err != nil {
		return "", fmt.Errorf("lsa model id: %w", err)
	}
	if _, err := f.ReadAt(sum[:], fi.Size()-sha256.Size); err != nil {
		return "", fmt.Errorf("lsa model id: %w", err)
	}
	if string(hb[:len(fileMagic)]) != fileMagic {
		return "", fmt.Errorf("lsa model id: %w: %s is not an LSA model", ErrCorrupt, path)
	}
	dim := binary.LittleEndian.Uint32(hb[len(fileMagic)+4:])
	return fmt.Sprintf("lsa-%d@%s", dim, hex.EncodeToString(sum[:])[:12]), nil
}
