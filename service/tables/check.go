package tables

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/redact"
	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/storage/location"
)

// CheckResult is what Check found of one configured table.
type CheckResult struct {
	ID string
	// Where is the table's location (its secrets removed), or its name.
	Where string
	// Broken says why the table cannot be opened or its log read ("" when it can); Version
	// is the version read.
	Broken  string
	Version int64
}

// checkTimeout bounds the check of one table (an object store that does not answer).
const checkTimeout = time.Minute

// Check opens each configured table of cfg as the service opens it (its storage options
// from getenv, its catalog or warehouse) and reads its latest snapshot: the log, nothing
// else; nothing is written. It says which tables are broken, and why, as the tables list
// says it (serve --check). Discover roots are not listed. Every message is redacted.
func Check(ctx context.Context, cfg *config.Config, getenv func(string) string) []CheckResult {
	if getenv == nil {
		getenv = os.Getenv
	}
	red := redact.New()
	for _, e := range location.SDKSecretEnv {
		red.Add(getenv(e))
	}
	env := &Env{Now: time.Now, Red: red, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ts := &Set{Env: env, cfg: cfg, byID: map[string]*Table{}}
	for _, st := range cfg.Stores { // a check's requests count against its store's limit too
		if l, err := newLimiter(st); err == nil {
			ts.limiters = append(ts.limiters, l)
		}
	}
	var out []CheckResult
	for i := range cfg.Tables {
		tc := &cfg.Tables[i]
		c := CheckResult{ID: tc.ID, Where: location.SafeURI(tc.Path)}
		if tc.Path == "" {
			c.Where = tc.Name
		}
		t, err := ts.newTable(tc, getenv)
		if err == nil {
			tctx, cancel := context.WithTimeout(ctx, checkTimeout)
			var v int64
			v, err = checkTable(tctx, t)
			cancel()
			c.Version = v
		}
		if err != nil {
			c.Broken = red.String(err.Error())
		}
		out = append(out, c)
	}
	return out
}

// checkTable opens t and reads its latest snapshot, returning its version.
func checkTable(ctx context.Context, t *Table) (int64, error) {
	dt, err := t.Open(ctx)
	if err != nil {
		return 0, err
	}
	snap, err := dt.Snapshot(ctx)
	if err != nil {
		return 0, err
	}
	return snap.Version, nil
}
