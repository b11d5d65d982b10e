package redact

import (
	"bytes"
	"io"
	"sync"
)

// Writer redacts what is written through it. It holds back an unfinished line (text after
// the last '\n' or '\r') until the line ends or Flush is called, so that a secret written in
// pieces is seen whole. It is safe for concurrent use.
type Writer struct {
	r   *Redactor
	w   io.Writer
	mu  sync.Mutex
	buf []byte
}

// Writer returns a Writer that writes to w what is written to it, redacted by r.
func (r *Redactor) Writer(w io.Writer) *Writer { return &Writer{r: r, w: w} }

// Write writes the complete lines of what was written so far, redacted, in one write to the
// underlying writer, and keeps the rest. It reports len(p) written unless the underlying
// write fails.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	i := bytes.LastIndexAny(w.buf, "\n\r")
	if i < 0 {
		return len(p), nil
	}
	out := w.r.String(string(w.buf[:i+1]))
	w.buf = w.buf[:copy(w.buf, w.buf[i+1:])]
	if _, err := io.WriteString(w.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back, redacted.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) == 0 {
		return nil
	}
	out := w.r.String(string(w.buf))
	w.buf = w.buf[:0]
	_, err := io.WriteString(w.w, out)
	return err
}

// Unwrap returns the underlying writer (to ask whether it is a terminal).
func (w *Writer) Unwrap() io.Writer { return w.w }
