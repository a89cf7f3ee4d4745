//go:build linux

package dense

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the first size bytes of f read-only, its pages populated
// up front (from the page cache when the file is warm: no copy). unmap
// releases the mapping.
func mapFile(f *os.File, size int64) (buf []byte, unmap func(), err error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, errNoMmap
	}
	m, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return nil, nil, err
	}
	return m, func() { _ = unix.Munmap(m) }, nil
}
