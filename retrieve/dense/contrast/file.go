package contrast

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
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
const (
	fileMagic   = "citefCTR"
	fileVersion = 1
	maxTermLen  = 1 << 12
)

// Save writes the model in its binary form (see Load).
func (m *Model) Save(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	h := sha256.New()
	if err := m.writeTo(io.MultiWriter(bw, h)); err != nil {
		return fmt.Errorf("contrast save: %w", err)
	}
	if _, err := bw.Write(h.Sum(nil)); err != nil {
		return fmt.Errorf("contrast save: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("contrast save: %w", err)
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
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m.f.vocab)))
	b = binary.LittleEndian.AppendUint32(b, uint32(m.f.buckets))
	b = binary.LittleEndian.AppendUint64(b, uint64(m.docs))
	for _, x := range []int{o.MinDF, o.MaxVocab, o.Epochs, o.MinSteps, o.Batch, o.Heads} {
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(x)))
	}
	var flags byte
	for i, f := range []bool{o.OneWay, o.Decay, o.Spans, o.Init == InitLSA, o.Neighbours, o.Average} {
		if f {
			flags |= 1 << i
		}
	}
	b = append(b, flags)
	b = binary.LittleEndian.AppendUint64(b, o.Seed)
	for _, x := range []float64{o.MaxDFRatio, o.Temperature, o.LR, o.InitScale, o.Overlap} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	flush := func(force bool) error {
		if len(b) < 1<<15 && !force {
			return nil
		}
		_, err := w.Write(b)
		b = b[:0]
		return err
	}
	for _, t := range m.f.vocab {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		if err := flush(false); err != nil {
			return err
		}
	}
	for _, xs := range [][]float32{m.f.idf, m.w} {
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
			if err := flush(false); err != nil {
				return err
			}
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
		return nil, fmt.Errorf("contrast load: %w", err)
	}
	return m, nil
}

type loader struct {
	r   *bufio.Reader
	h   hash.Hash
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
		return nil, fmt.Errorf("%w: not a contrast model (magic %q)", ErrCorrupt, magic)
	}
	var u [10]uint32 // version, dim, terms, buckets, minDF, maxVocab, epochs, minSteps, batch, heads
	var docs uint64
	for i := range u {
		var err error
		if i == 4 {
			if docs, err = l.u64(); err != nil {
				return nil, err
			}
		}
		if u[i], err = l.u32(); err != nil {
			return nil, err
		}
	}
	if u[0] != fileVersion {
		return nil, fmt.Errorf("%w: unsupported version %d (want %d)", ErrCorrupt, u[0], fileVersion)
	}
	dim, terms, buckets := int(u[1]), int(u[2]), int(u[3])
	if dim < 1 || dim > maxDim || terms < 1 || terms > maxFeatures || buckets > maxFeatures || docs > math.MaxInt32 {
		return nil, fmt.Errorf("%w: bad sizes (dim %d, terms %d, buckets %d, docs %d)", ErrCorrupt, dim, terms, buckets, docs)
	}
	flags, err := l.ReadByte()
	if err != nil {
		return nil, err
	}
	seed, err := l.u64()
	if err != nil {
		return nil, err
	}
	var fl [5]float64
	for i := range fl {
		x, err := l.u64()
		if err != nil {
			return nil, err
		}
		fl[i] = math.Float64frombits(x)
	}
	o := Options{Dim: dim, MinDF: int(u[4]), MaxVocab: int(u[5]), Epochs: int(u[6]), MinSteps: int(int32(u[7])), Batch: int(u[8]), Heads: int(u[9]),
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
		return nil, fmt.Errorf("%w: bad options (%v)", ErrCorrupt, err)
	}
	vocab := make([]string, 0, min(terms, 1<<16))
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
		if k := len(vocab); k > 0 && !(vocab[k-1] < string(t)) {
			return nil, fmt.Errorf("%w: vocabulary not sorted at term %d", ErrCorrupt, k)
		}
		vocab = append(vocab, string(t))
	}
	size := terms + buckets
	idf, err := l.float32s(size)
	if err != nil {
		return nil, err
	}
	w, err := l.float32s(size * dim)
	if err != nil {
		return nil, err
	}
	sum := make([]byte, sha256.Size)
	if _, err := io.ReadFull(l.r, sum); err != nil {
		return nil, err
	}
	if !bytes.Equal(sum, l.h.Sum(nil)) {
		return nil, fmt.Errorf("%w: checksum mismatch", ErrCorrupt)
	}
	m := &Model{opts: o, docs: int(docs), f: newFeatures(vocab, buckets, idf), w: w}
	m.finish()
	return m, nil
}

const chunk = 1 << 14

// float32s reads n finite float32s, growing the slice as data arrives so
// that a corrupt size cannot make Load allocate more than the file holds.
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
			x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, fmt.Errorf("%w: non-finite value", ErrCorrupt)
			}
			out = append(out, x)
		}
	}
	return out, nil
}

// SaveFile writes m to path atomically: a temporary file in the same
// folder, synced, renamed into place, and the folder synced, so that path
// holds either the old or the new model after a crash.
func SaveFile(path string, m *Model) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("save %s: %w", path, err)
	}
	tmp := f.Name()
	err = f.Chmod(0o644) // as os.Create would make it
	if err == nil {
		err = m.Save(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return fmt.Errorf("save %s: sync folder: %w", path, err)
		}
	}
	return nil
}

// LoadFile reads the model at path. When spec is not "", the model must
// have been trained for that feature set and dimension (Options.Spec,
// Model.Spec): another one gives an error wrapping ErrMismatch that names
// both. Errors name the file.
func LoadFile(path, spec string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load embedder model: %w", err)
	}
	defer f.Close()
	m, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if spec != "" && m.Spec() != spec {
		return nil, fmt.Errorf("%s: %w: it has %s, want %s (retrain it)", path, ErrMismatch, m.Spec(), spec)
	}
	return m, nil
}

// ModelID returns the Model() identity of the model file at path without
// loading it: the dimension from the header and the checksum Save appends
// (the SHA-256 of the file body, which the identity is made of). It does
// not verify the checksum (Load does). A file too short to be a model, or
// without the magic, gives an error wrapping ErrCorrupt.
func ModelID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("contrast model id: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("contrast model id: %w", err)
	}
	const head = len(fileMagic) + 8 // magic, version, dim
	if fi.Size() < int64(head+sha256.Size) {
		return "", fmt.Errorf("contrast model id: %w: %s is too short", ErrCorrupt, path)
	}
	var hb [head]byte
	var sum [sha256.Size]byte
	if _, err := f.ReadAt(hb[:], 0); err != nil {
		return "", fmt.Errorf("contrast model id: %w", err)
	}
	if _, err := f.ReadAt(sum[:], fi.Size()-sha256.Size); err != nil {
		return "", fmt.Errorf("contrast model id: %w", err)
	}
	if string(hb[:len(fileMagic)]) != fileMagic {
		return "", fmt.Errorf("contrast model id: %w: %s is not a contrast model", ErrCorrupt, path)
	}
	dim := binary.LittleEndian.Uint32(hb[len(fileMagic)+4:])
	return fmt.Sprintf("contrast-%d@%s", dim, hex.EncodeToString(sum[:])[:12]), nil
}
