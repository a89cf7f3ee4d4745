package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/citefind/citefind"
	"github.com/citefind/citefind/cite"
	"github.com/citefind/citefind/cite/csl"
	"github.com/citefind/citefind/corpus"
	"github.com/citefind/citefind/engine"
)

// SearchRequest is the body of POST /v1/search.
type SearchRequest struct {
	// Query is the excerpt with a missing citation, or a question
	// (required). Citation markers are removed unless Raw.
	Query string `json:"query"`
	// K is the number of candidates, 1..Options.MaxK; 0 means 10.
	K int `json:"k,omitempty"`
	// Retrievers are "bm25" and/or "dense"; empty means the engine's
	// default (bm25).
	Retrievers []string `json:"retrievers,omitempty"`
	// Rerank names the reranker ("none" or "" for none).
	Rerank string `json:"rerank,omitempty"`
	// Pick fills "picked" with the paper to cite.
	Pick bool `json:"pick,omitempty"`
	// Raw searches the text as given, citation markers included.
	Raw bool `json:"raw,omitempty"`
}

// Search validates req and runs it on eng; bad requests are *FieldError.
// The result is the object `citefind query --json` prints.
func Search(ctx context.Context, eng *engine.Engine, req SearchRequest, maxK int) (*citefind.Result, error) {
	if maxK <= 0 {
		maxK = DefaultMaxK
	}
	q := strings.TrimSpace(req.Query)
	if q == "" {
		return nil, badField("query", "query is required: the excerpt or question to find citations for")
	}
	if req.K < 0 || req.K > maxK {
		return nil, badField("k", "k must be between 1 and %d, got %d", maxK, req.K)
	}
	for _, r := range req.Retrievers {
		if !slices.Contains(citefind.RetrieverNames, r) {
			return nil, badField("retrievers", "unknown retriever %q (available: %s)", r, strings.Join(citefind.RetrieverNames, ", "))
		}
	}
	if req.Rerank != "" && !slices.Contains(citefind.RerankerNames, req.Rerank) {
		return nil, badField("rerank", "unknown reranker %q (available: %s)", req.Rerank, strings.Join(citefind.RerankerNames, ", "))
	}
	if slices.Contains(req.Retrievers, citefind.RetrieverDense) {
		if err := eng.DenseAvailable(ctx); err != nil {
			return nil, badField("retrievers", "%v", err)
		}
	}
	res, err := eng.Search(ctx, q, citefind.QueryOptions{
		K: req.K, Retrievers: req.Retrievers, Raw: req.Raw, Rerank: req.Rerank, Pick: req.Pick,
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	var req SearchRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	res, err := admitted(s, r, func() (*citefind.Result, error) { return Search(r.Context(), s.eng, req, s.opts.MaxK) })
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// admitted runs work in an admission slot and releases it before the
// answer is written, so that a client slow to read holds none.
func admitted[T any](s *Server, r *http.Request, work func() (T, error)) (T, error) {
	release, err := s.admit(r.Context())
	if err != nil {
		var zero T
		return zero, err
	}
	defer release()
	return work()
}

// fail writes err: a *FieldError as it is, a passed deadline as a 503
// (a body that took too long to arrive as a 408), anything else as a 500.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var fe *FieldError
	var bte *BodyTimeoutError
	switch {
	case errors.As(err, &fe):
		writeError(w, err)
	case errors.As(err, &bte):
		writeError(w, &FieldError{Status: http.StatusRequestTimeout, Field: "body", Msg: bte.Error()})
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(r.Context().Err(), context.DeadlineExceeded):
		writeJSON(w, http.StatusServiceUnavailable, errorBody{Error: fmt.Sprintf("the request took longer than its deadline of %s", s.opts.RequestTimeout)})
	case r.Context().Err() != nil:
		// The client went away; 499 is only for the log.
		w.WriteHeader(499)
	default:
		s.log.ErrorContext(r.Context(), "request failed", "request_id", RequestID(r.Context()), "err", err)
		writeError(w, err)
	}
}

// CiteRequest is the body of POST /v1/cite.
type CiteRequest struct {
	// Draft holds [[cite:ID]] placeholders (required).
	Draft string `json:"draft"`
	// Style is a CSL style name: apa (default), ieee, mla, chicago,
	// harvard, vancouver or any style `citefind styles` lists (nature,
	// acm-sig-proceedings, …). File paths are not accepted.
	Style string `json:"style,omitempty"`
	// Format is md (default: Markdown that can be resolved again), html
	// (sanitised fragments, also re-resolvable) or text.
	Format string `json:"format,omitempty"`
	// Lenient keeps placeholders naming unknown IDs (marked ⚠) instead of
	// refusing the draft.
	Lenient bool `json:"lenient,omitempty"`
}

// CiteWarning is something the writer should look at.
type CiteWarning struct {
	Line    int    `json:"line"`
	Col     int    `json:"col"`
	ID      string `json:"id"`
	Kind    string `json:"kind"` // missing-metadata, quote, not-retrieved, unknown-id, no-printed-form, footnote-label
	Message string `json:"message"`
}

// UnknownID is a cited ID that is not in the store, where it was cited.
type UnknownID struct {
	ID   string `json:"id"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// Bibliography is the formatted reference list.
type Bibliography struct {
	Style   string   `json:"style"`
	Heading string   `json:"heading"` // "References", "Works Cited", …
	Entries []string `json:"entries"` // formatted, in bibliography order, with their labels
	IDs     []string `json:"ids"`     // the paper of each entry
}

// CiteResponse is the answer of POST /v1/cite.
type CiteResponse struct {
	Text         string        `json:"text"`         // the draft with citations and the bibliography
	Bibliography *Bibliography `json:"bibliography"` // null when the draft cites nothing
	Warnings     []CiteWarning `json:"warnings"`
	Cited        []string      `json:"cited"`             // paper IDs in order of first citation
	Unknown      []UnknownID   `json:"unknown,omitempty"` // with lenient: IDs left unresolved
	// Notes are a note style's footnotes in order, as text also holds
	// them (before the bibliography); their marks are in text.
	Notes []string `json:"notes,omitempty"`
}

// Cite validates req and resolves its draft against the papers of lk
// (the engine's store) with styles (nil: a new csl.Engine), as `citefind
// cite` does, within limits (see CiteLimits; a draft over one is a 413).
// candidates, when not nil, are the IDs earlier searches returned: cited
// papers outside them are warned about. Bad requests, including unknown
// IDs, unknown styles and malformed placeholders, are *FieldError naming
// "draft", "style" or "format".
func Cite(ctx context.Context, lk cite.Lookup, styles *csl.Engine, req CiteRequest, candidates map[string]bool, limits cite.Limits) (*CiteResponse, error) {
	if strings.TrimSpace(req.Draft) == "" {
		return nil, badField("draft", "draft is required: text with [[cite:ID]] placeholders")
	}
	styleName := req.Style
	if styleName == "" {
		styleName = string(cite.APA)
	}
	if strings.ContainsAny(styleName, `/\`) || strings.HasSuffix(strings.ToLower(styleName), ".csl") {
		return nil, badField("style", "style %q: give a style name (`citefind styles` lists them); file paths are not accepted over the API", styleName)
	}
	if styles == nil {
		styles = csl.New(csl.Options{})
	}
	if _, err := cite.ResolveStyle(styles, cite.Style(styleName)); err != nil {
		return nil, badField("style", "%v", err)
	}
	st := cite.Style(styleName)
	formatName := req.Format
	if formatName == "" {
		formatName = "md"
	}
	format, err := cite.ParseFormat(strings.ToLower(formatName))
	if err != nil {
		return nil, badField("format", "%v", err)
	}
	res, err := cite.Resolve(ctx, req.Draft, lk, cite.Options{Style: st, Format: format, Engine: styles, Lenient: req.Lenient, Candidates: candidates,
		Limits: CiteLimits(limits)})
	if err != nil {
		var ue *cite.UnknownIDError
		var el cite.ErrorList
		var se *cite.SyntaxError
		var le *cite.LimitError
		switch {
		case errors.As(err, &le):
			return nil, &FieldError{Status: http.StatusRequestEntityTooLarge, Field: "draft",
				Msg:     fmt.Sprintf("the draft has more than %d %s, the limit of one request (passed at line %d, column %d); split it, or resolve it with citefind cite", le.Limit, le.What, le.Line, le.Col),
				Details: map[string]any{"limit": le.Limit, "what": le.What, "line": le.Line, "col": le.Col}}
		case errors.As(err, &se), errors.Is(err, cite.ErrSyntax):
			return nil, badField("draft", "%v", err)
		case errors.As(err, &ue):
			fe := badField("draft", "%v", err)
			fe.Status = http.StatusUnprocessableEntity
			fe.Details = map[string]any{"unknown": unknownIDs(ue.IDs)}
			return nil, fe
		case errors.As(err, &el):
			return nil, badField("draft", "%v", err)
		case cite.IsStyleError(err):
			return nil, badField("style", "%v", err)
		case errors.Is(err, csl.ErrBadItem):
			fe := badField("draft", "%v", err)
			fe.Status = http.StatusUnprocessableEntity
			return nil, fe
		}
		return nil, fmt.Errorf("resolve citations: %w", err)
	}
	out := &CiteResponse{Text: res.Text, Warnings: []CiteWarning{}, Cited: res.Cited, Unknown: unknownIDs(res.Unknown), Notes: res.Notes}
	if out.Cited == nil {
		out.Cited = []string{}
	}
	for _, w := range res.Warnings {
		out.Warnings = append(out.Warnings, CiteWarning{Line: w.Line, Col: w.Col, ID: w.ID, Kind: w.Kind, Message: w.Msg})
	}
	if b := res.Bibliography; b != nil && len(b.Entries) > 0 {
		nb := &Bibliography{Style: b.StyleName(), Heading: b.Heading(), Entries: b.Entries, IDs: make([]string, len(b.Papers))}
		for i, p := range b.Papers {
			nb.IDs[i] = p.ID
		}
		out.Bibliography = nb
	}
	return out, nil
}

func unknownIDs(us []cite.UnknownID) []UnknownID {
	if len(us) == 0 {
		return nil
	}
	out := make([]UnknownID, len(us))
	for i, u := range us {
		out[i] = UnknownID{ID: u.ID, Line: u.Line, Col: u.Col}
	}
	return out
}

func (s *Server) handleCite(w http.ResponseWriter, r *http.Request) {
	var req CiteRequest
	if err := decodeBody(r, &req); err != nil {
		writeError(w, err)
		return
	}
	res, err := admitted(s, r, func() (*CiteResponse, error) {
		return Cite(r.Context(), s.eng.Papers(), s.opts.Styles, req, nil, s.opts.CiteLimits)
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// Paper is a paper as the API returns it.
type Paper struct {
	ID        string   `json:"id"`
	Type      string   `json:"type,omitempty"`
	Title     string   `json:"title"`
	Authors   []string `json:"authors"`
	Year      int      `json:"year,omitempty"`
	Venue     string   `json:"venue,omitempty"`
	DOI       string   `json:"doi,omitempty"`
	URL       string   `json:"url,omitempty"`
	ArXiv     string   `json:"arxiv,omitempty"`
	Abstract  string   `json:"abstract,omitempty"`
	Keywords  []string `json:"keywords,omitempty"`
	Publisher string   `json:"publisher,omitempty"`
	Volume    string   `json:"volume,omitempty"`
	Issue     string   `json:"issue,omitempty"`
	Pages     string   `json:"pages,omitempty"`
}

// NewPaper converts a stored paper to its API form.
func NewPaper(p corpus.Paper) Paper {
	out := Paper{ID: p.ID, Type: p.Type, Title: p.Title, Authors: []string{}, Year: p.Year, Venue: p.Venue,
		DOI: p.DOI, URL: p.URL, ArXiv: p.ArXiv, Abstract: p.Abstract, Keywords: p.Keywords,
		Publisher: p.Publisher, Volume: p.Volume, Issue: p.Issue, Pages: p.Pages}
	for _, a := range p.Authors {
		out.Authors = append(out.Authors, a.Name())
	}
	return out
}

// GetPaper looks a paper up by ID or alias; an unknown one is a 404
// *FieldError naming "id".
func GetPaper(ctx context.Context, st engine.PaperLookup, id string) (Paper, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return Paper{}, badField("id", "id is required: a paper ID or alias")
	}
	p, err := st.Get(ctx, id)
	switch {
	case errors.Is(err, corpus.ErrNotFound):
		return Paper{}, &FieldError{Status: http.StatusNotFound, Field: "id", Msg: fmt.Sprintf("no paper with ID or alias %q", id)}
	case errors.Is(err, corpus.ErrAmbiguous):
		return Paper{}, &FieldError{Status: http.StatusConflict, Field: "id", Msg: fmt.Sprintf("%q: %v; use the paper ID", id, err)}
	case err != nil:
		return Paper{}, fmt.Errorf("get paper: %w", err)
	}
	return NewPaper(p), nil
}

func (s *Server) handlePaper(w http.ResponseWriter, r *http.Request) {
	p, err := admitted(s, r, func() (Paper, error) { return GetPaper(r.Context(), s.eng.Papers(), r.PathValue("id")) })
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// Health is the answer of GET /healthz.
type Health struct {
	Status      string `json:"status"` // "ok"
	IndexLoaded bool   `json:"index_loaded"`
	Papers      int    `json:"papers"` // papers in the BM25 index
	// Generation is the store generation the indexes being served
	// reflect; it moves when serve picks up an index or remove run.
	Generation int64 `json:"generation"`
	// Dense is true when the database has a usable dense index (index
	// --embedder): only then may a search ask for the "dense" retriever.
	Dense bool `json:"dense"`
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Health{Status: "ok", IndexLoaded: true, Papers: s.eng.Count(r.Context()),
		Generation: s.eng.Generation(), Dense: s.eng.DenseAvailable(r.Context()) == nil})
}
