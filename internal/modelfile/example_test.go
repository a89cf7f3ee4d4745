package modelfile_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/citefind/citefind/internal/modelfile"
)

// Write a small model and read it back, checksum included.
func ExampleFormat() {
	format := modelfile.Format{Magic: "citefXYZ", Version: 1, Kind: "an XYZ model", Corrupt: errors.New("corrupt model file")}
	vocab := []string{"graph", "neural"}
	vectors := []float32{0.6, 0.8, 1, 0}
	body := func(e *modelfile.Encoder) {
		e.U32(uint32(len(vocab)))
		e.Terms(vocab)
		e.Float32s(vectors)
	}
	var buf bytes.Buffer
	if err := format.Write(&buf, 2, body); err != nil {
		fmt.Println(err)
		return
	}

	r, dim, err := format.NewReader(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	n, _ := r.U32()
	terms, _ := r.Terms(int(n), 64)
	vecs, _ := r.Float32s(int(n)*dim, true)
	fmt.Println(dim, terms, vecs, r.Verify())
	fmt.Println(len(format.Hash(2, body)), "hex digits of SHA-256")
	// Output:
	// 2 [graph neural] [0.6 0.8 1 0] <nil>
	// 64 hex digits of SHA-256
}
