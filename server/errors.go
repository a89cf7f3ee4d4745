package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// FieldError is a request the server refuses, with the field at fault. It
// is written as {"error": Msg, "field": Field} with HTTP status Status.
type FieldError struct {
	Status int    // HTTP status, 4xx; 0 means 400
	Field  string // the request field at fault: "query", "k", "body", …
	Msg    string // what is wrong and what is accepted
	// Details, when not nil, is written as "details" (e.g. the unknown
	// IDs of a draft with their line and column).
	Details any
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// errorBody is the JSON of every error response.
type errorBody struct {
	Error   string `json:"error"`
	Field   string `json:"field,omitempty"`
	Details any    `json:"details,omitempty"`
}

func badField(field, format string, args ...any) *FieldError {
	return &FieldError{Status: http.StatusBadRequest, Field: field, Msg: fmt.Sprintf(format, args...)}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client went away: nothing to do
}

func writeError(w http.ResponseWriter, err error) {
	var fe *FieldError
	if errors.As(err, &fe) {
		status := fe.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		writeJSON(w, status, errorBody{Error: fe.Msg, Field: fe.Field, Details: fe.Details})
		return
	}
	writeJSON(w, http.StatusInternalServerError, errorBody{Error: err.Error()})
}

// decodeBody reads one JSON object into v (requireJSON has checked the
// Content-Type), refusing unknown fields,
// wrongly typed values, trailing data and bodies over the limit, each as a
// *FieldError naming the field (or "body").
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if dec.More() {
			return badField("body", "the body must hold one JSON object, and it has more after it")
		}
		if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
			return jsonError(err)
		}
		return nil
	}
	return jsonError(err)
}

func jsonError(err error) error {
	var mbe *http.MaxBytesError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	var bte *BodyTimeoutError
	switch {
	case errors.As(err, &bte):
		return &FieldError{Status: http.StatusRequestTimeout, Field: "body",
			Msg: bte.Error() + " (the server's body deadline, serve --body-timeout)"}
	case errors.As(err, &mbe):
		return &FieldError{Status: http.StatusRequestEntityTooLarge, Field: "body",
			Msg: fmt.Sprintf("the body is larger than the limit of %d bytes", mbe.Limit)}
	case errors.Is(err, io.EOF):
		return badField("body", "the body is empty; send a JSON object")
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			return badField("body", "the body must be a JSON object, got %s", te.Value)
		}
		return badField(field, "%s: expected %s, got %s", field, jsonType(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		return badField("body", "the body is not valid JSON: %v (at byte %d)", err, se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badField("body", "the body is not valid JSON: it ends too early")
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return badField(name, "unknown field %q", name)
	}
	return badField("body", "the body is not valid JSON: %v", err)
}

func jsonType(kind string) string {
	switch kind {
	case "int", "int64", "int32":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return kind
}
