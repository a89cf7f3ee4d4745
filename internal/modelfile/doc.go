// Package modelfile reads and writes the checksummed binary model files of
// the trained embedders (retrieve/dense/lsa, retrieve/dense/contrast).
//
// A file is a body followed by the SHA-256 of the body. The body is
// little-endian and starts with a header, the Format's magic, its version
// (uint32) and the model's dimension (uint32); what follows is the
// package's own, written through an Encoder and read back through a
// Reader, which hashes what it reads so that Verify can check the
// trailing checksum. Identity reads the dimension and the checksum of a
// file without reading the body.
//
//	var format = modelfile.Format{Magic: "citefXYZ", Version: 1, Kind: "an XYZ model", Corrupt: ErrCorrupt}
//
//	err := format.Write(w, dim, func(e *modelfile.Encoder) {
//		e.U32(uint32(len(vocab)))
//		e.Terms(vocab)
//		e.Float32s(vectors)
//	})
//	sum := format.Hash(dim, body) // hex SHA-256 of the body, as Write appends it
//
//	r, dim, err := format.NewReader(f) // checks magic and version
//	n, err := r.U32()
//	vocab, err := r.Terms(int(n), maxTermLen)
//	vectors, err := r.Float32s(int(n)*dim, true)
//	err = r.Verify() // the checksum
//
//	dim, sum, err := format.Identity(path) // no body read, no checksum verified
//
// Errors for a malformed file (bad magic, version, term or value, checksum
// mismatch) wrap Format.Corrupt, the caller's sentinel, so their text
// reads "<Corrupt>: checksum mismatch". A file that ends early gives
// io.EOF or io.ErrUnexpectedEOF from the Reader, unwrapped, for the caller
// to report as truncated.
package modelfile
