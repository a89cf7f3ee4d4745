// Package atomicfile writes files so that a reader, or a process that
// survives a crash of the writer, sees either the old content or the new,
// never a part: the data go to a temporary file in the same folder, which
// is synced, closed and renamed over the target, then the folder is synced.
//
//	err := atomicfile.WriteFile("fusion.json", data, 0o644)
//	err = atomicfile.Write("model.bin", 0o644, func(f *os.File) error {
//		return m.Save(f)
//	})
//
// A writer killed mid-way leaves a temporary file named TARGET.tmp-RANDOM;
// Leftovers lists them, so the next run can remove them.
package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// TempInfix separates a target's name from the random suffix of its
// temporary files: TARGET + TempInfix + RANDOM.
const TempInfix = ".tmp-"

// Write creates or replaces path atomically with what fn writes to f (a
// new temporary file in path's folder, opened for writing; fn may seek and
// WriteAt, and must not close it). When fn or any step fails, the
// temporary file is removed, path is left as it was and the error is
// returned, wrapped with the path.
func Write(path string, perm os.FileMode, fn func(f *os.File) error) (err error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := path + TempInfix + hex.EncodeToString(rnd[:])
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("write %s: %w", path, err)
		}
	}()
	if err = fn(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// WriteFile is Write for a byte slice.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// SyncDir makes a rename or removal in dir durable. File systems that
// cannot sync a folder (EINVAL) are not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !isEINVAL(err) {
		return err
	}
	return nil
}

// Leftovers returns the temporary files that killed writers of path left.
func Leftovers(path string) ([]string, error) {
	return filepath.Glob(path + TempInfix + "*")
}

// RemoveLeftovers removes Leftovers(path) and returns how many there were.
func RemoveLeftovers(path string) (int, error) {
	tmp, err := Leftovers(path)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range tmp {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return n, fmt.Errorf("remove leftover %s: %w", filepath.Base(p), err)
		}
		n++
	}
	return n, nil
}
