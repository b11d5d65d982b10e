package service

import (
	"context"

	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/tables"
)

// TableCheck is what CheckTables found of one configured table.
type TableCheck = tables.CheckResult

// CheckTables opens each configured table of cfg as the service opens it and reads its latest
// snapshot (serve --check): tables.Check.
func CheckTables(ctx context.Context, cfg *config.Config, getenv func(string) string) []TableCheck {
	return tables.Check(ctx, cfg, getenv)
}
