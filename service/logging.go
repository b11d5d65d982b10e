package service

import (
	"context"
	"log/slog"

	"github.com/deltavacuum/deltavacuum/internal/redact"
)

// redactingHandler passes every log record's message and attributes through the redactor.
type redactingHandler struct {
	h   slog.Handler
	red *redact.Redactor
}

func (h *redactingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.h.Enabled(ctx, l)
}

func (h *redactingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.red.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(slog.String(a.Key, h.red.String(a.Value.String())))
		return true
	})
	return h.h.Handle(ctx, out)
}

func (h *redactingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &redactingHandler{h: h.h.WithAttrs(as), red: h.red}
}

func (h *redactingHandler) WithGroup(name string) slog.Handler {
	return &redactingHandler{h: h.h.WithGroup(name), red: h.red}
}
