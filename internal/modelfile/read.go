package modelfile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"math"
	"slices"
)

// A Reader reads a file body written through an Encoder and hashes what
// it reads, for Verify. A file that ends early gives io.EOF or
// io.ErrUnexpectedEOF; other errors for a malformed file wrap the
// Format's Corrupt.
type Reader struct {
	f   Format
	r   *bufio.Reader
	h   hash.Hash
	buf [8]byte
	tmp []byte // Terms' scratch
}

// NewReader reads the header of a file of format f from r, buffered, and
// returns a Reader for the rest of the body and the model's dimension. A
// file without the magic, or of another version, gives an error wrapping
// f.Corrupt.
func (f Format) NewReader(r io.Reader) (*Reader, int, error) {
	rd := &Reader{f: f, r: bufio.NewReaderSize(r, 1<<16), h: sha256.New()}
	magic, err := rd.Bytes(len(f.Magic))
	if err != nil {
		return nil, 0, err
	}
	if string(magic) != f.Magic {
		return nil, 0, fmt.Errorf("%w: not %s (magic %q)", f.Corrupt, f.Kind, magic)
	}
	version, err := rd.U32()
	if err != nil {
		return nil, 0, err
	}
	dim, err := rd.U32()
	if err != nil {
		return nil, 0, err
	}
	if version != f.Version {
		return nil, 0, fmt.Errorf("%w: unsupported version %d (want %d)", f.Corrupt, version, f.Version)
	}
	return rd, int(dim), nil
}

// fill reads len(b) bytes into b and hashes them.
func (r *Reader) fill(b []byte) error {
	if _, err := io.ReadFull(r.r, b); err != nil {
		return err
	}
	r.h.Write(b)
	return nil
}

// Bytes reads n bytes into a new slice; n comes from the caller, not from
// the file, or is small (a length byte).
func (r *Reader) Bytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if err := r.fill(b); err != nil {
		return nil, err
	}
	return b, nil
}

// ReadByte reads one byte; with it a Reader is an io.ByteReader, for
// binary.ReadUvarint.
func (r *Reader) ReadByte() (byte, error) {
	b := r.buf[:1]
	if err := r.fill(b); err != nil {
		return 0, err
	}
	return b[0], nil
}

// U32 reads a uint32.
func (r *Reader) U32() (uint32, error) {
	b := r.buf[:4]
	if err := r.fill(b); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// U64 reads a uint64.
func (r *Reader) U64() (uint64, error) {
	b := r.buf[:8]
	if err := r.fill(b); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// Terms reads n terms written by Encoder.Terms, which must be sorted and
// distinct and each of 1 to maxLen bytes.
func (r *Reader) Terms(n, maxLen int) ([]string, error) {
	// Grow the slice as terms arrive so that a corrupt n cannot make it
	// allocate more than the file holds.
	out := make([]string, 0, min(n, 1<<16))
	for range n {
		k, err := binary.ReadUvarint(r)
		if err != nil {
			return nil, err
		}
		if k == 0 || k > uint64(maxLen) {
			return nil, fmt.Errorf("%w: bad term length %d", r.f.Corrupt, k)
		}
		r.tmp = slices.Grow(r.tmp[:0], int(k))[:k]
		if err := r.fill(r.tmp); err != nil {
			return nil, err
		}
		t := string(r.tmp)
		if i := len(out); i > 0 && !(out[i-1] < t) {
			return nil, fmt.Errorf("%w: vocabulary not sorted at term %d", r.f.Corrupt, i)
		}
		out = append(out, t)
	}
	return out, nil
}

// chunk is how many values Float32s and Float64s read at a time.
const chunk = 1 << 14

// Float32s reads n float32s. With finite, a NaN or an infinity among them
// is an error wrapping the Format's Corrupt.
func (r *Reader) Float32s(n int, finite bool) ([]float32, error) {
	return floats(r, n, 4, finite, func(dst []float32, b []byte) {
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	})
}

// Float64s reads n float64s. With finite, a NaN or an infinity among them
// is an error wrapping the Format's Corrupt.
func (r *Reader) Float64s(n int, finite bool) ([]float64, error) {
	return floats(r, n, 8, finite, func(dst []float64, b []byte) {
		for i := range dst {
			dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	})
}

// floats reads n values of size bytes each in chunks, decoding each chunk
// with decode, and grows the slice as data arrive so that a corrupt n
// cannot make it allocate more than the file holds.
func floats[T float32 | float64](r *Reader, n, size int, finite bool, decode func(dst []T, b []byte)) ([]T, error) {
	out := make([]T, 0, min(n, chunk))
	buf := make([]byte, size*min(n, chunk))
	for len(out) < n {
		c := min(chunk, n-len(out))
		b := buf[:size*c]
		if err := r.fill(b); err != nil {
			return nil, err
		}
		k := len(out)
		out = slices.Grow(out, c)[:k+c]
		decode(out[k:], b)
		if !finite {
			continue
		}
		for _, x := range out[k:] {
			if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%w: non-finite value", r.f.Corrupt)
			}
		}
	}
	return out, nil
}

// Verify reads the checksum that ends the file and compares it with the
// SHA-256 of all that the Reader has read, header included; a mismatch
// is an error wrapping the Format's Corrupt. What follows the checksum is
// not read.
func (r *Reader) Verify() error {
	var sum [sha256.Size]byte
	if _, err := io.ReadFull(r.r, sum[:]); err != nil {
		return err
	}
	if !bytes.Equal(sum[:], r.h.Sum(nil)) {
		return fmt.Errorf("%w: checksum mismatch", r.f.Corrupt)
	}
	return nil
}
