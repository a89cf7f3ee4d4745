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

	// Errors the readers wrap in ParseError.Err.

	// ErrSyntax means a record is malformed: an unterminated entry, value
	// or quoted string, a missing citation key, a field without "=",
	// invalid JSON, …
	ErrSyntax = errors.New("syntax error")
	// ErrUndefinedMacro means a BibTeX value names an @string macro that
	// was not defined earlier in the file; the entry is skipped.
	ErrUndefinedMacro = errors.New("undefined @string macro")
	// ErrNoTitle means a record has no title (or an empty one); a paper
	// needs a title, so the record is skipped.
	ErrNoTitle = errors.New("record has no title")
	// ErrBadField means a CSL-JSON field has the wrong JSON type.
	ErrBadField = errors.New("bad field")
	// ErrUnknownFormat means ReadFile does not know the file's extension.
	ErrUnknownFormat = errors.New("unknown file format")
	// ErrNotReference means a BibTeX entry is no reference but data for
	// the bibliography tools (biblatex's @set and @xdata, IEEEtran's
	// @IEEEtranBSTCTL, REVTeX's @control): it is skipped. Ingest reports
	// it as a warning, not as a bad record.
	ErrNotReference = errors.New("not a reference")

	// Causes of record Warnings: the record is stored anyway.

	// ErrInvalidUTF8 means a line holds invalid UTF-8, replaced by U+FFFD.
	ErrInvalidUTF8 = errors.New("invalid UTF-8 replaced by U+FFFD")
	// ErrLatin1 means a file is not UTF-8 but 8-bit text (it holds no
	// UTF-8 character at all): it was read as Windows-1252, a superset of
	// Latin-1; the warning names each line with such a character.
	ErrLatin1 = errors.New("not UTF-8: read as Latin-1 (Windows-1252); save the file as UTF-8 to be sure")
	// ErrInvalidDOI means a record's DOI is not a valid DOI (see CleanDOI);
	// the paper is identified without it.
	ErrInvalidDOI = errors.New("invalid DOI")
	// ErrInvalidArXiv means a record's arXiv id (the CSL "arxiv" key, a
	// BibTeX eprint of archivePrefix arXiv, arxiv or arxivid) is not one
	// (see NormalizeArXiv); the paper is identified without it.
	ErrInvalidArXiv = errors.New("invalid arXiv id")
	// ErrUnsafeKey means a record's key is not a safe ID (ValidID): its
	// alias is the escaped key (EscapeID), or none when that is longer
	// than MaxIDLen.
	ErrUnsafeKey = errors.New("key")
	// ErrCrossref means a BibTeX entry's crossref names no entry of its
	// file; the entry is stored with its own fields only.
	ErrCrossref = errors.New("crossref")
	// ErrXData means a BibTeX entry's xdata field names no @xdata entry
	// of its file (or a circular chain of them, or one with an undefined
	// macro), or a field holds biber's granular xdata reference: the entry
	// is stored with the fields it could inherit.
	ErrXData = errors.New("xdata")
	// ErrDuplicateKey means a record's key already names another paper;
	// the key keeps naming that one (see KeyConflict).
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrMacroConflict means a BibTeX entry uses an @string macro that
	// the .bib files read with its own define differently; the entry has
	// the value of the file given last (as BibTeX gives it), and the
	// warning names every value.
	ErrMacroConflict = errors.New("@string macro defined differently by the .bib files read together:")
)
