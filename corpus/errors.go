package corpus

import "errors"

// Sentinel errors of the corpus package. Callers test for them with
// errors.Is; the returned errors wrap them with the offending id or path.
var (
	// ErrNotFound means no paper has the asked ID or alias.
	ErrNotFound = errors.New("paper not found")
	// ErrAmbiguous means an ID or alias only matched case-insensitively,
	// and it matched aliases of more than one paper.
	ErrAmbiguous = errors.New("alias names more than one paper")
	// ErrSchemaVersion means the store file was written by a newer
	// citefind whose schema this version does not know.
	ErrSchemaVersion = errors.New("unsupported store schema version")
)
