package modelfile

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math"
)

// block is how many bytes an Encoder gathers before passing them on.
const block = 1 << 15

// Write writes a file of format f to w, buffered: the header with dim,
// what body encodes, and the SHA-256 of both.
func (f Format) Write(w io.Writer, dim int, body func(*Encoder)) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	h := sha256.New()
	if err := f.encode(io.MultiWriter(bw, h), dim, body); err != nil {
		return err
	}
	if _, err := bw.Write(h.Sum(nil)); err != nil {
		return err
	}
	return bw.Flush()
}

// Hash returns the hex SHA-256 of the body that Write writes for the same
// dim and body: the checksum at the end of the file.
func (f Format) Hash(dim int, body func(*Encoder)) string {
	h := sha256.New()
	_ = f.encode(h, dim, body) // a hash never fails
	return hex.EncodeToString(h.Sum(nil))
}

func (f Format) encode(w io.Writer, dim int, body func(*Encoder)) error {
	e := &Encoder{w: w, b: make([]byte, 0, 2*block)}
	e.String(f.Magic)
	e.U32(f.Version)
	e.U32(uint32(dim))
	body(e)
	e.flush()
	return e.err
}

// An Encoder appends little-endian values to a file body. It passes them
// on in blocks; the first write error stops it, and Write returns it.
type Encoder struct {
	w   io.Writer
	b   []byte
	err error
}

// flush passes on what the Encoder holds.
func (e *Encoder) flush() {
	if e.err == nil && len(e.b) > 0 {
		_, e.err = e.w.Write(e.b)
	}
	e.b = e.b[:0]
}

// more flushes once a block is gathered.
func (e *Encoder) more() {
	if len(e.b) >= block {
		e.flush()
	}
}

// Byte appends x.
func (e *Encoder) Byte(x byte) { e.b = append(e.b, x); e.more() }

// String appends the bytes of s, without a length (see Terms).
func (e *Encoder) String(s string) { e.b = append(e.b, s...); e.more() }

// U32 appends x.
func (e *Encoder) U32(x uint32) { e.b = binary.LittleEndian.AppendUint32(e.b, x); e.more() }

// U64 appends x.
func (e *Encoder) U64(x uint64) { e.b = binary.LittleEndian.AppendUint64(e.b, x); e.more() }

// Terms appends each term as its length (uvarint) and its bytes.
func (e *Encoder) Terms(terms []string) {
	for _, t := range terms {
		e.b = binary.AppendUvarint(e.b, uint64(len(t)))
		e.b = append(e.b, t...)
		e.more()
	}
}

// Float32s appends the IEEE 754 bits of each x.
func (e *Encoder) Float32s(xs []float32) {
	for _, x := range xs {
		e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(x))
		e.more()
	}
}

// Float64s appends the IEEE 754 bits of each x.
func (e *Encoder) Float64s(xs []float64) {
	for _, x := range xs {
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(x))
		e.more()
	}
}
