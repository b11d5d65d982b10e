package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/deltavacuum/deltavacuum/internal/strictjson"
)

// What every handler does with a request and its answer: decode the body, write JSON, and
// answer an error (fail: by its kind).

// writeJSON writes v, redacted.
func (s *Server) writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"encoding the response failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	io.WriteString(w, s.Red.String(string(b))+"\n")
}

type errorBody struct {
	Error string `json:"error"`
}

// fail answers err with the status of its kind (statusOf).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	s.failCode(w, r, statusOf(err), err)
}

// failCode answers err with code: the refusals of the HTTP layer itself (guard, login), and
// fail's answer.
func (s *Server) failCode(w http.ResponseWriter, r *http.Request, code int, err error) {
	if fabricPath(r) {
		s.fabricError(w, r, code, fabricCodeOfStatus(code), err.Error())
		return
	}
	msg := s.Red.String(err.Error())
	if code >= 500 || code == http.StatusConflict {
		s.Log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", code, "error", msg)
	}
	s.writeJSON(w, code, errorBody{Error: msg})
}

// decode reads the JSON object body of a request into v, as strictly as the Delta log is read
// (internal/strictjson): a duplicate key, a key in another case, a key v does not declare,
// invalid UTF-8 or anything after the object is refused, with a message naming the key. Every
// handler that takes a body reads it here. An empty body is {}.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return of(errInvalid, fmt.Errorf("reading the body: %w", err))
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if b := bytes.TrimSpace(b); b[0] != '{' {
		return of(errInvalid, errors.New("the body is not the JSON object expected: send an object, {} for none"))
	}
	if err := strictjson.UnmarshalKnown(b, v); err != nil {
		return of(errInvalid, fmt.Errorf("the body is not the JSON object expected: %w", err))
	}
	return nil
}
