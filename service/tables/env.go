package tables

import (
	"log/slog"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/redact"
)

// Env is what every part of the service reads and none owns: the clock, the log (every record
// through the redactor) and the redactor, which learns each secret as a table, the token or the
// webhook is set up. The tables, the runner and the HTTP side share one.
type Env struct {
	Now func() time.Time
	Log *slog.Logger
	Red *redact.Redactor
}
