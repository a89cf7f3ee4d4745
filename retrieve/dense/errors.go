package dense

import (
	"errors"
	"fmt"
)

// Sentinel errors. Test for them with errors.Is.
var (
	// ErrEmbedder is wrapped by every failure of an embedder: the model
	// server's status (see StatusError), a refused connection after the
	// retries, a malformed reply, a wrong number of vectors or a wrong
	// dimension. A failure caused by the caller's context also wraps the
	// context's error (context.Canceled or context.DeadlineExceeded).
	ErrEmbedder = errors.New("embedder failed")
	// ErrNoIndex means the folder holds no dense index (or only an
	// unfinished one). Build it from the store.
	ErrNoIndex = errors.New("no dense index")
	// ErrModelMismatch means the index was built with another embedder
	// (model id or dimension) than the one given to Open.
	ErrModelMismatch = errors.New("index built with another embedder")
	// ErrBadK means Retrieve was asked for k <= 0 hits.
	ErrBadK = errors.New("k must be positive")
	// ErrClosed means the Cache was used after Close.
	ErrClosed = errors.New("closed")
)

// StatusError is an HTTP error status from the model server (for Ollama:
// any reply with status >= 400). It unwraps to ErrEmbedder. Code 404 with
// Ollama means the model is not pulled ("model \"x\" not found, try
// pulling it first"); 5xx statuses are retried before a StatusError is
// returned.
type StatusError struct {
	Code int    // HTTP status code, e.g. 404 or 500
	Body string // the server's error message (Ollama's "error" field), or the raw body when it is not JSON
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("embedder: HTTP %d: %s", e.Code, e.Body)
}

// Unwrap returns ErrEmbedder.
func (e *StatusError) Unwrap() error { return ErrEmbedder }

// embedErr wraps cause as an embedder failure, keeping cause visible to
// errors.Is/As.
func embedErr(prefix string, cause error) error {
	var se *StatusError
	if errors.As(cause, &se) {
		return fmt.Errorf("%s: %w", prefix, cause)
	}
	return fmt.Errorf("%s: %w: %w", prefix, ErrEmbedder, cause)
}
