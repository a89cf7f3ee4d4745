package corpus

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Extensions returns the file extensions ReadFile reads, lower-case with
// the dot: ".bib", ".bibtex" (BibTeX), ".json" (CSL-JSON), ".jsonl",
// ".ndjson" (JSON Lines of CSL-JSON items). Extensions match in any case.
func Extensions() []string {
	return []string{".bib", ".bibtex", ".json", ".jsonl", ".ndjson"}
}

// withRefs sets Record.Ref on the records of one file, in file order.
func withRefs(emit func(Record) error) func(Record) error {
	if emit == nil {
		return nil
	}
	seen := map[string]int{}
	keyless := 0
	return func(r Record) error {
		if r.Key == "" {
			keyless++
			r.Ref = "#" + strconv.Itoa(keyless)
		} else {
			seen[r.Key]++
			r.Ref = r.Key
			if n := seen[r.Key]; n > 1 {
				r.Ref += "#" + strconv.Itoa(n)
			}
		}
		return emit(r)
	}
}

// ReadFile reads one file, choosing the reader by its extension (any
// case): .bib and .bibtex → ReadBibTeX, .jsonl and .ndjson → ReadJSONL,
// .json → ReadCSLJSON. Records and errors name the file as path. An
// unknown extension gives an error wrapping ErrUnknownFormat that names the
// file and the supported extensions; a file that cannot be opened or read
// gives the wrapped I/O error. Bad records go to onErr, see the readers.
// Records get their Ref, which names them within the file.
func ReadFile(ctx context.Context, path string, emit func(Record) error, onErr func(*ParseError)) error {
	emit = withRefs(emit)
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".bib", ".bibtex":
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		return readBibTeX(ctx, data, path, nil, nil, emit, onErr)
	case ".jsonl", ".ndjson", ".json":
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
		defer f.Close()
		if ext == ".json" {
			return ReadCSLJSON(ctx, f, path, emit, onErr)
		}
		return ReadJSONL(ctx, f, path, emit, onErr)
	}
	return fmt.Errorf("%s: %w (supported: %s)", path, ErrUnknownFormat, strings.Join(Extensions(), " "))
}
