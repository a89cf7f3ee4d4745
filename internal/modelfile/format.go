package modelfile

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
)

// Format describes one kind of model file.
type Format struct {
	// Magic is the first bytes of every file (8 in ours).
	Magic string
	// Version is the format version written after the magic, and the only
	// one a Reader accepts.
	Version uint32
	// Kind names a file of this format in errors: "an LSA model".
	Kind string
	// Corrupt is the sentinel that errors for a malformed file wrap.
	Corrupt error
}

// headerSize is the length of the header: magic, version, dimension.
func (f Format) headerSize() int { return len(f.Magic) + 8 }

// Identity returns the dimension in the header of the file at path and
// the hex SHA-256 of its body stored at its end. It reads only those two
// places, so it is cheap for a large model; it does not verify the
// checksum (Reader.Verify does). A file too short for a header and a
// checksum, or without the magic, gives an error wrapping f.Corrupt that
// names path; other errors are those of the file system.
func (f Format) Identity(path string) (dim int, sum string, err error) {
	file, err := os.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return 0, "", err
	}
	head := make([]byte, f.headerSize())
	if fi.Size() < int64(len(head)+sha256.Size) {
		return 0, "", fmt.Errorf("%w: %s is too short", f.Corrupt, path)
	}
	var s [sha256.Size]byte
	if _, err := file.ReadAt(head, 0); err != nil {
		return 0, "", err
	}
	if _, err := file.ReadAt(s[:], fi.Size()-sha256.Size); err != nil {
		return 0, "", err
	}
	if string(head[:len(f.Magic)]) != f.Magic {
		return 0, "", fmt.Errorf("%w: %s is not %s", f.Corrupt, path, f.Kind)
	}
	return int(binary.LittleEndian.Uint32(head[len(f.Magic)+4:])), hex.EncodeToString(s[:]), nil
}
