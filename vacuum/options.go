package vacuum

import (
	"errors"
	"fmt"
)

// ErrInvalidOptions is matched (errors.Is) by every refusal of Options.Validate: the request
// itself is wrong, whatever the table (the command line's usage errors).
var ErrInvalidOptions = errors.New("invalid VACUUM options")

// OptionError is the refusal of one option: Option names it (as RETAIN, --retain-hours and the
// API call it: "retainHours", "mode", "shard", "version", "inventory"), Err says why.
type OptionError struct {
	Option string
	Err    error
}

func (e *OptionError) Error() string { return e.Err.Error() }

// Unwrap gives both ErrInvalidOptions and the reason (ErrNegativeRetention, ErrInventoryWithLite,
// ErrShardWithoutVersion, ...).
func (e *OptionError) Unwrap() []error { return []error{ErrInvalidOptions, e.Err} }

// Validate checks the options on their own, before any table is read: the mode, the retention
// as a number of hours (RetentionOf; the safety check needs the table and is the planner's),
// the pinned version, the shard and its version, an inventory with LITE. It is the one check of
// them: the planner calls it, and so does every front end before it touches a table
// (run.Request.Validate).
func (o Options) Validate() error {
	switch o.Mode {
	case "", ModeFull, ModeLite:
	default:
		return &OptionError{"mode", fmt.Errorf("unknown VACUUM mode %q (FULL or LITE)", o.Mode)}
	}
	if o.RetainHours != nil {
		if _, err := RetentionOf(*o.RetainHours); err != nil {
			return &OptionError{"retainHours", err}
		}
	}
	if o.Version != nil && *o.Version < 0 {
		return &OptionError{"version", fmt.Errorf("version %d: a table version is 0 or more", *o.Version)}
	}
	if o.Shard != nil {
		if err := o.Shard.Check(); err != nil {
			return &OptionError{"shard", err}
		}
		if o.Version == nil {
			return &OptionError{"shard", ErrShardWithoutVersion}
		}
	}
	if o.Mode == ModeLite && o.Inventory != nil {
		return &OptionError{"inventory", ErrInventoryWithLite}
	}
	return nil
}
