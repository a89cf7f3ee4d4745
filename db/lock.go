package db

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultLockWait is how long a writer waits for another one by default.
const DefaultLockWait = 30 * time.Second

// ErrLocked means another process holds the database's write lock.
var ErrLocked = errors.New("database is being written by another citefind")

// WriteLock is the write lock of a database folder: an exclusive flock(2) on
// DIR/lock, which also holds the owner's pid. The kernel releases it when
// the process exits, however it exits, so a killed writer never leaves a
// stale lock.
type WriteLock struct {
	f *os.File
}

// Lock takes the write lock of the database folder dir (creating the
// folder), for a command that changes the store or the indexes. When
// another process holds it, Lock calls waiting (if not nil) once with
// that process's pid (0 if unknown), and tries again until wait has passed
// or ctx is done; then it returns an error wrapping ErrLocked that names
// the holder. wait <= 0 means try once.
//
// Readers (query, status) take no lock: the store is SQLite in WAL mode
// and index updates are renamed into place.
func Lock(ctx context.Context, dir string, wait time.Duration, waiting func(pid int)) (*WriteLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create database folder: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	deadline := time.Now().Add(wait)
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		pid := readPid(path)
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: %s is locked by pid %d; gave up after %s (--wait)", ErrLocked, dir, pid, wait)
		}
		if !told && waiting != nil {
			told = true
			waiting(pid)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("wait for lock of %s: %w", dir, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &WriteLock{f: f}, nil
}

// Unlock releases the lock.
func (l *WriteLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := l.f.Close() // releases the flock
	l.f = nil
	return err
}

// WriterActive reports whether a process holds the write lock of dir, and
// its pid (0 if unknown).
func WriterActive(dir string) (pid int, active bool) {
	path := filepath.Join(dir, LockFile)
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return readPid(path), errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return 0, false
}

func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}
