package state

import (
	"context"
	"fmt"
)

// SetMode records the mode run id ran in, when it is not the one it started with (a LITE the
// log could not serve, run FULL).
func (s *DB) SetMode(ctx context.Context, id, mode string) error {
	if mode != "FULL" && mode != "LITE" {
		return fmt.Errorf("state: mode %q is neither FULL nor LITE", mode)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE runs SET mode = ? WHERE id = ?`, mode, id); err != nil {
		return fmt.Errorf("state: run %s: %w", id, err)
	}
	return nil
}
