package dense

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"

	chromem "github.com/philippgille/chromem-go"

	"github.com/citefind/citefind/internal/atomicfile"
)

// The sidecar is a flat copy of the export made for loading: the paper IDs
// in ascending order, the float32 matrix and its int8 copy, laid out so
// that Open reads the file with one read and uses the sections in place.
// It is derived data: the export stays the canonical collection, and Open
// falls back to importing it whenever the sidecar is missing, does not
// belong to the export the header names, or fails its checks.
//
// Layout (native byte order, which the header records; sections start at
// multiples of 64 bytes):
//
//	[0,256)  header: magic, version, byte-order mark, dim, count, int8
//	         stride, export size, ID blob length, payload CRC-32C,
//	         export name, header CRC-32C (the last 4 bytes)
//	vecs     count·dim float32
//	codes    count·stride int8 (stride 0: no int8 copy)
//	scale    count float32 (when stride > 0)
//	l1       count float32 (when stride > 0)
//	ends     count uint32: end offset of each ID in the blob
//	blob     the IDs, concatenated
const (
	// SidecarSuffix is appended to the export's name to name its sidecar:
	// papers-<random>.gob.flat.
	SidecarSuffix = ".flat"

	sidecarMagic    = "CFDVECS\x00"
	sidecarVersion  = 1
	sidecarBOM      = 0x01020304
	sidecarHdrSize  = 256
	sidecarAlign    = 64
	sidecarMaxName  = 160
	sidecarNameOff  = 64
	sidecarMaxBytes = 1 << 40
)

// SidecarName returns the file name of the sidecar of the export named
// export.
func SidecarName(export string) string { return export + SidecarSuffix }

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errSidecar marks a sidecar that cannot be used; Open then imports the
// export. errNoMmap: the sidecar is read rather than mapped.
var (
	errSidecar = errors.New("unusable sidecar")
	errNoMmap  = errors.New("no mmap")
)

// sidecarLayout is the offset and length in bytes of every section.
type sidecarLayout struct {
	vecs, codes, scale, l1, ends, blob [2]int64
	size                               int64
}

func alignUp(x int64) int64 { return (x + sidecarAlign - 1) / sidecarAlign * sidecarAlign }

func layoutOf(n, dim, stride int, blob int64) sidecarLayout {
	var l sidecarLayout
	off := int64(sidecarHdrSize)
	sec := func(size int64) [2]int64 {
		s := [2]int64{off, size}
		off = alignUp(off + size)
		return s
	}
	l.vecs = sec(int64(n) * int64(dim) * 4)
	l.codes = sec(int64(n) * int64(stride))
	if stride > 0 {
		l.scale = sec(int64(n) * 4)
		l.l1 = sec(int64(n) * 4)
	} else {
		l.scale = sec(0)
		l.l1 = sec(0)
	}
	l.ends = sec(int64(n) * 4)
	l.blob = [2]int64{off, blob}
	l.size = off + blob
	return l
}

// sidecarHeader is the decoded fixed header.
type sidecarHeader struct {
	dim, count, stride int
	exportSize         int64
	blob               int64
	crc                uint32
	export             string
}

func (h sidecarHeader) encode() []byte {
	b := make([]byte, sidecarHdrSize)
	ne := binary.NativeEndian
	copy(b, sidecarMagic)
	ne.PutUint32(b[8:], sidecarVersion)
	ne.PutUint32(b[12:], sidecarBOM)
	ne.PutUint32(b[16:], uint32(h.dim))
	ne.PutUint64(b[20:], uint64(h.count))
	ne.PutUint32(b[28:], uint32(h.stride))
	ne.PutUint64(b[32:], uint64(h.exportSize))
	ne.PutUint64(b[40:], uint64(h.blob))
	ne.PutUint32(b[48:], h.crc)
	ne.PutUint32(b[52:], uint32(len(h.export)))
	copy(b[sidecarNameOff:], h.export)
	ne.PutUint32(b[sidecarHdrSize-4:], crc32.Checksum(b[:sidecarHdrSize-4], crcTable))
	return b
}

func decodeSidecarHeader(b []byte) (sidecarHeader, error) {
	var h sidecarHeader
	ne := binary.NativeEndian
	if len(b) < sidecarHdrSize || string(b[:8]) != sidecarMagic {
		return h, fmt.Errorf("%w: bad magic", errSidecar)
	}
	if ne.Uint32(b[sidecarHdrSize-4:]) != crc32.Checksum(b[:sidecarHdrSize-4], crcTable) {
		return h, fmt.Errorf("%w: header checksum mismatch", errSidecar)
	}
	if v := ne.Uint32(b[8:]); v != sidecarVersion {
		return h, fmt.Errorf("%w: version %d", errSidecar, v)
	}
	if ne.Uint32(b[12:]) != sidecarBOM {
		return h, fmt.Errorf("%w: other byte order", errSidecar)
	}
	nameLen := int(ne.Uint32(b[52:]))
	if nameLen > sidecarMaxName {
		return h, fmt.Errorf("%w: bad export name length", errSidecar)
	}
	h.dim = int(ne.Uint32(b[16:]))
	count := ne.Uint64(b[20:])
	h.stride = int(ne.Uint32(b[28:]))
	h.exportSize = int64(ne.Uint64(b[32:]))
	blob := ne.Uint64(b[40:])
	h.crc = ne.Uint32(b[48:])
	h.export = string(b[sidecarNameOff : sidecarNameOff+nameLen])
	if count > 1<<31 || blob > sidecarMaxBytes || h.dim <= 0 {
		return h, fmt.Errorf("%w: bad sizes", errSidecar)
	}
	h.count, h.blob = int(count), int64(blob)
	return h, nil
}

// writeSidecar writes the sidecar of export (whose size is exportSize) to
// dir for the IDs ids (ascending) whose unit vectors are row(i), with the
// int8 copy from quantMinRows rows on, atomically: a temporary file,
// synced, renamed into place. It streams the rows, so it needs no second
// copy of the matrix.
func writeSidecar(dir, export string, exportSize int64, ids []string, dim int, row func(i int) []float32) (err error) {
	n := len(ids)
	stride := 0
	if n >= quantMinRows {
		stride = (dim + quantCols - 1) / quantCols * quantCols
	}
	var blob int64
	for _, id := range ids {
		blob += int64(len(id))
	}
	if blob > 1<<32-1 || len(export) > sidecarMaxName {
		return errors.New("sidecar: too large")
	}
	l := layoutOf(n, dim, stride, blob)

	final := filepath.Join(dir, SidecarName(export))
	return atomicfile.Write(final, 0o644, func(f *os.File) error {
		return fillSidecar(f, l, n, dim, stride, exportSize, blob, export, ids, row)
	})
}

// fillSidecar writes a sidecar's payload and then its header to f.
func fillSidecar(f *os.File, l sidecarLayout, n, dim, stride int, exportSize int64, blob int64, export string, ids []string, row func(int) []float32) error {
	// The header, with the payload's checksum, is written last.
	if _, err := f.Write(make([]byte, sidecarHdrSize)); err != nil {
		return err
	}
	crc := crc32.New(crcTable)
	w := bufio.NewWriterSize(io.MultiWriter(f, crc), 1<<20)
	off := int64(sidecarHdrSize)
	var zeros [sidecarAlign]byte
	put := func(sec [2]int64, data []byte) {
		if off < sec[0] {
			w.Write(zeros[:sec[0]-off])
			off = sec[0]
		}
		w.Write(data)
		off += int64(len(data))
	}
	for i := range n {
		put(l.vecs, f32bytes(row(i)))
	}
	if stride > 0 {
		scale, l1 := make([]float32, n), make([]float32, n)
		codes := make([]int8, stride) // one row at a time; the padding stays zero
		for i := range n {
			l1[i], scale[i] = quantizeRow(row(i), codes[:dim])
			put(l.codes, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(codes))), len(codes)))
		}
		put(l.scale, f32bytes(scale))
		put(l.l1, f32bytes(l1))
	}
	ends := make([]uint32, n)
	var e uint32
	for i, id := range ids {
		e += uint32(len(id))
		ends[i] = e
	}
	put(l.ends, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(ends))), 4*len(ends)))
	for _, id := range ids {
		put(l.blob, []byte(id))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if off != l.size {
		return fmt.Errorf("sidecar: wrote %d bytes, want %d", off, l.size)
	}
	hdr := sidecarHeader{dim: dim, count: n, stride: stride, exportSize: exportSize, blob: blob, crc: crc.Sum32(), export: export}.encode()
	if _, err := f.WriteAt(hdr, 0); err != nil {
		return err
	}
	return nil
}

func f32bytes(v []float32) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

// sidecarSection returns the section sec of buf as a []T; buf is 64-byte
// aligned and sec[1] a multiple of T's size.
func sidecarSection[T any](buf []byte, sec [2]int64) []T {
	var z T
	n := int(sec[1]) / int(unsafe.Sizeof(z))
	if n == 0 {
		return []T{}
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&buf[sec[0]])), n)
}

// loadSidecar fills r from the sidecar of export in dir. It fails with an
// error wrapping errSidecar (or the read error) when the file is missing,
// belongs to another export, or fails a check; r is then left unchanged.
func (r *Retriever) loadSidecar(dir string) error {
	h := r.header
	fi, err := os.Stat(filepath.Join(dir, h.Export))
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(dir, SidecarName(h.Export)))
	if err != nil {
		return err
	}
	defer f.Close()
	var hb [sidecarHdrSize]byte
	if _, err := io.ReadFull(f, hb[:]); err != nil {
		return fmt.Errorf("%w: %w", errSidecar, err)
	}
	sh, err := decodeSidecarHeader(hb[:])
	if err != nil {
		return err
	}
	wantStride := 0
	if h.Docs >= quantMinRows {
		wantStride = (h.Dim + quantCols - 1) / quantCols * quantCols
	}
	switch {
	case sh.export != h.Export || sh.exportSize != fi.Size():
		return fmt.Errorf("%w: made for another export (%s, %d bytes)", errSidecar, sh.export, sh.exportSize)
	case sh.count != h.Docs || sh.dim != h.Dim || sh.stride != wantStride:
		return fmt.Errorf("%w: %d×%d (stride %d), header says %d×%d", errSidecar, sh.count, sh.dim, sh.stride, h.Docs, h.Dim)
	}
	l := layoutOf(sh.count, sh.dim, sh.stride, sh.blob)
	sfi, err := f.Stat()
	if err != nil {
		return err
	}
	if sfi.Size() != l.size {
		return fmt.Errorf("%w: %d bytes, want %d", errSidecar, sfi.Size(), l.size)
	}
	// Map the file (Linux: populated from the page cache, no copy), or
	// read it with one read into one page-aligned allocation; either way
	// the sections are used in place, except the IDs, which are copied
	// into one Go string (hits hand them out).
	buf, unmap, err := mapFile(f, l.size)
	if err != nil {
		buf, unmap = make([]byte, l.size), nil
		if _, err := io.ReadFull(io.NewSectionReader(f, 0, l.size), buf); err != nil {
			return fmt.Errorf("%w: %w", errSidecar, err)
		}
	}
	ok := false
	defer func() {
		if !ok && unmap != nil {
			unmap()
		}
	}()
	if string(buf[:sidecarHdrSize]) != string(hb[:]) {
		return fmt.Errorf("%w: changed while read", errSidecar)
	}
	if crc32.Checksum(buf[sidecarHdrSize:], crcTable) != sh.crc {
		return fmt.Errorf("%w: checksum mismatch", errSidecar)
	}
	n := sh.count
	ends := sidecarSection[uint32](buf, l.ends)
	blob := string(buf[l.blob[0] : l.blob[0]+l.blob[1]])
	ids := make([]string, n)
	var start uint32
	for i, e := range ends {
		if e < start || int64(e) > l.blob[1] {
			return fmt.Errorf("%w: bad ID offsets", errSidecar)
		}
		ids[i] = blob[start:e]
		if ids[i] == "" || i > 0 && ids[i] <= ids[i-1] {
			return fmt.Errorf("%w: IDs not ascending", errSidecar)
		}
		start = e
	}
	ok = true
	if unmap != nil {
		// The matrices live in the mapping as long as r does.
		runtime.AddCleanup(r, func(unmap func()) { unmap() }, unmap)
	}
	r.ids = ids
	r.vecs = sidecarSection[float32](buf, l.vecs)
	if sh.stride > 0 {
		r.quant = &quantMatrix{
			stride: sh.stride,
			codes:  sidecarSection[int8](buf, l.codes),
			scale:  sidecarSection[float32](buf, l.scale),
			l1:     sidecarSection[float32](buf, l.l1),
		}
	}
	return nil
}

// EnsureSidecar writes the sidecar of the index in dir when it has none
// that Open can use (an index built before sidecars existed, or one whose
// sidecar was lost or damaged), from the export. It reports whether it
// wrote one. Call it holding the database's write lock, as Build is
// called.
func EnsureSidecar(ctx context.Context, dir string) (bool, error) {
	h, err := Stat(dir)
	if err != nil {
		return false, err
	}
	if h.Docs == 0 {
		return false, nil
	}
	r := &Retriever{header: h, dim: h.Dim}
	if err := r.loadSidecar(dir); err == nil {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("dense: sidecar: %w", err)
	}
	if err := r.loadExport(dir); err != nil {
		return false, fmt.Errorf("dense: sidecar: %w", err)
	}
	fi, err := os.Stat(filepath.Join(dir, h.Export))
	if err != nil {
		return false, fmt.Errorf("dense: sidecar: %w", err)
	}
	d := r.dim
	if err := writeSidecar(dir, h.Export, fi.Size(), r.ids, d, func(i int) []float32 { return r.vecs[i*d : (i+1)*d] }); err != nil {
		return false, fmt.Errorf("dense: sidecar: %w", err)
	}
	return true, nil
}

// loadExport fills r from the export with chromem-go's importer.
func (r *Retriever) loadExport(dir string) error {
	h := r.header
	db := chromem.NewDB()
	if err := db.ImportFromFile(filepath.Join(dir, h.Export), ""); err != nil {
		return err
	}
	col := db.GetCollection(CollectionName, refuseEmbed)
	if col == nil {
		return fmt.Errorf("%w: no collection %q in %s", ErrNoIndex, CollectionName, h.Export)
	}
	return r.load(col)
}
