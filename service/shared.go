package service

import (
	"log/slog"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/redact"
)

// shared is what every part of the service reads and none owns: the clock, the log (every
// record through the redactor) and the redactor, which learns each secret as a table, the
// token or the webhook is set up.
type shared struct {
	now func() time.Time
	log *slog.Logger
	red *redact.Redactor
}
