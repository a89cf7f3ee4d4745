package modelfile_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citefind/citefind/internal/modelfile"
)

var errCorrupt = errors.New("corrupt model file")

var format = modelfile.Format{Magic: "citefTST", Version: 3, Kind: "a test model", Corrupt: errCorrupt}

// model is what a test file holds after the header.
type model struct {
	flag  byte
	name  string
	n     uint32
	big   uint64
	terms []string
	f64   []float64
	f32   []float32
}

func (m model) body(e *modelfile.Encoder) {
	e.Byte(m.flag)
	e.Byte(byte(len(m.name)))
	e.String(m.name)
	e.U32(m.n)
	e.U64(m.big)
	e.U32(uint32(len(m.terms)))
	e.Terms(m.terms)
	e.U32(uint32(len(m.f64)))
	e.Float64s(m.f64)
	e.U32(uint32(len(m.f32)))
	e.Float32s(m.f32)
}

// read reads what body wrote.
func read(data []byte, finite bool) (m model, dim int, err error) {
	r, dim, err := format.NewReader(bytes.NewReader(data))
	if err != nil {
		return m, 0, err
	}
	var nameLen byte
	var n uint32
	steps := []func() error{
		func() (err error) { m.flag, err = r.ReadByte(); return err },
		func() (err error) { nameLen, err = r.ReadByte(); return err },
		func() error { b, err := r.Bytes(int(nameLen)); m.name = string(b); return err },
		func() (err error) { m.n, err = r.U32(); return err },
		func() (err error) { m.big, err = r.U64(); return err },
		func() (err error) { n, err = r.U32(); return err },
		func() (err error) { m.terms, err = r.Terms(int(n), 16); return err },
		func() (err error) { n, err = r.U32(); return err },
		func() (err error) { m.f64, err = r.Float64s(int(n), finite); return err },
		func() (err error) { n, err = r.U32(); return err },
		func() (err error) { m.f32, err = r.Float32s(int(n), finite); return err },
		r.Verify,
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return m, dim, err
		}
	}
	return m, dim, nil
}

func sample() model {
	m := model{flag: 0x2a, name: "plain", n: 1<<32 - 1, big: 1<<63 + 5, terms: []string{"a", "b", "zeta"}}
	for i := range 40000 { // more than a block and a read chunk
		m.f32 = append(m.f32, float32(i)/3)
	}
	for i := range 20000 {
		m.f64 = append(m.f64, -float64(i)/7)
	}
	return m
}

func TestRoundTrip(t *testing.T) {
	for _, m := range []model{sample(), {terms: []string{}, f64: []float64{}, f32: []float32{}}} {
		var buf bytes.Buffer
		require.NoError(t, format.Write(&buf, 768, m.body))
		data := buf.Bytes()

		// header, body, and the checksum of both
		require.Greater(t, len(data), 20+sha256.Size)
		assert.Equal(t, "citefTST\x03\x00\x00\x00\x00\x03\x00\x00", string(data[:16]))
		body := data[:len(data)-sha256.Size]
		sum := sha256.Sum256(body)
		assert.Equal(t, sum[:], data[len(body):])
		assert.Equal(t, hex.EncodeToString(sum[:]), format.Hash(768, m.body))

		got, dim, err := read(data, true)
		require.NoError(t, err)
		assert.Equal(t, 768, dim)
		assert.Equal(t, m, got)

		path := filepath.Join(t.TempDir(), "m")
		require.NoError(t, os.WriteFile(path, data, 0o644))
		dim, s, err := format.Identity(path)
		require.NoError(t, err)
		assert.Equal(t, 768, dim)
		assert.Equal(t, hex.EncodeToString(sum[:]), s)
	}
}

func TestReadErrors(t *testing.T) {
	m := sample()
	m.f32 = m.f32[:3]
	m.f64 = m.f64[:3]
	file := func(m model, version uint32) []byte {
		f := format
		f.Version = version
		var buf bytes.Buffer
		require.NoError(t, f.Write(&buf, 4, m.body))
		return buf.Bytes()
	}
	good := file(m, 3)
	with := func(f func(*model)) []byte {
		m := m
		m.terms, m.f32, m.f64 = slices.Clone(m.terms), slices.Clone(m.f32), slices.Clone(m.f64)
		f(&m)
		return file(m, 3)
	}
	flip := slices.Clone(good)
	flip[len(flip)-sha256.Size-1] ^= 1
	tests := []struct {
		name   string
		data   []byte
		finite bool
		is     error
		msg    string
	}{
		{name: "empty", data: nil, is: io.EOF},
		{name: "no checksum", data: good[:len(good)-1], is: io.ErrUnexpectedEOF},
		{name: "bad magic", data: append([]byte("citefXYZ"), good[8:]...), is: errCorrupt, msg: `corrupt model file: not a test model (magic "citefXYZ")`},
		{name: "other version", data: file(m, 2), is: errCorrupt, msg: "corrupt model file: unsupported version 2 (want 3)"},
		{name: "checksum", data: flip, is: errCorrupt, msg: "corrupt model file: checksum mismatch"},
		{name: "empty term", data: with(func(m *model) { m.terms[0] = "" }), is: errCorrupt, msg: "corrupt model file: bad term length 0"},
		{name: "long term", data: with(func(m *model) { m.terms[0] = "abcdefghijklmnopq" }), is: errCorrupt, msg: "corrupt model file: bad term length 17"},
		{name: "unsorted", data: with(func(m *model) { m.terms[2] = "a" }), is: errCorrupt, msg: "corrupt model file: vocabulary not sorted at term 2"},
		{name: "NaN64", data: with(func(m *model) { m.f64[1] = math.NaN() }), finite: true, is: errCorrupt, msg: "corrupt model file: non-finite value"},
		{name: "Inf32", data: with(func(m *model) { m.f32[2] = float32(math.Inf(-1)) }), finite: true, is: errCorrupt, msg: "corrupt model file: non-finite value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := read(tc.data, tc.finite)
			require.ErrorIs(t, err, tc.is)
			if tc.msg != "" {
				assert.EqualError(t, err, tc.msg)
			}
		})
	}
	t.Run("non-finite allowed", func(t *testing.T) {
		got, _, err := read(with(func(m *model) { m.f32[2] = float32(math.Inf(1)) }), false)
		require.NoError(t, err)
		assert.True(t, math.IsInf(float64(got.f32[2]), 1))
	})
	t.Run("every truncation", func(t *testing.T) {
		for n := range len(good) {
			_, _, err := read(good[:n], true)
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("%d of %d bytes: %v", n, len(good), err)
			}
		}
	})
}

func TestIdentityErrors(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, format.Write(&buf, 4, func(*modelfile.Encoder) {}))
	good := buf.Bytes()
	dir := t.TempDir()
	tests := []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty", nil, "is too short"},
		{"short", good[:len(good)-1], "is too short"},
		{"bad magic", append([]byte("notmodel"), good[8:]...), "is not a test model"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			require.NoError(t, os.WriteFile(path, tc.data, 0o644))
			_, _, err := format.Identity(path)
			require.ErrorIs(t, err, errCorrupt)
			assert.EqualError(t, err, "corrupt model file: "+path+" "+tc.msg)
		})
	}
	_, _, err := format.Identity(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n < 0 {
		return 0, errBoom
	}
	return len(p), nil
}

var errBoom = errors.New("boom")

func TestWriteError(t *testing.T) {
	m := sample()
	for _, n := range []int{0, 1 << 16, 1 << 17, 200_000} {
		err := format.Write(&failWriter{n: n}, 4, m.body)
		require.ErrorIs(t, err, errBoom, "fails after %d bytes", n)
	}
}
