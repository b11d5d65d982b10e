package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
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
	io.WriteString(w, s.red.String(string(b))+"\n")
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
	msg := s.red.String(err.Error())
	if code >= 500 || code == http.StatusConflict {
		s.log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", code, "error", msg)
	}
	s.writeJSON(w, code, errorBody{Error: msg})
}

// decode reads a JSON object body into v strictly; an empty body is {}.
func decode(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return of(errInvalid, fmt.Errorf("reading the body: %w", err))
	}
	if strings.TrimSpace(string(b)) == "" {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return of(errInvalid, fmt.Errorf("the body is not the JSON object expected: %v", err))
	}
	if dec.More() {
		return of(errInvalid, errors.New("the body holds more than one JSON value"))
	}
	return nil
}
