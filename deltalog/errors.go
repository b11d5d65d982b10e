package deltalog

import "errors"

// Errors a caller can match with errors.Is. The wrapping error names the table and the file.
var (
	// ErrNotDeltaTable: no _delta_log, or one with neither commits nor a checkpoint.
	ErrNotDeltaTable = errors.New("not a Delta table")
	// ErrCorrupt: a checkpoint, sidecar or commit that cannot be read as the protocol says.
	ErrCorrupt = errors.New("corrupt Delta log")
	// ErrMissingVersion: a gap in the commit sequence; the table state is unknown.
	ErrMissingVersion = errors.New("missing log version")
	// ErrBadPath: a log path that is not a valid URI or that escapes the table root.
	ErrBadPath = errors.New("invalid path in Delta log")
	// ErrUnsupportedFeatures: the protocol names features this program does not support.
	ErrUnsupportedFeatures = errors.New("unsupported table features")
	// ErrCatalogManaged: the table's commits are managed by a catalog; VACUUM is blocked.
	ErrCatalogManaged = errors.New("catalog-managed table")
)

// NotTableError is the refusal to work on a location that is not a Delta table (or lies inside
// one). It matches ErrNotDeltaTable.
type NotTableError struct {
	Location string
	Detail   string
}

func (e *NotTableError) Error() string {
	msg := "`" + e.Location + "` is not a Delta table. VACUUM is only supported for Delta tables."
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrNotDeltaTable) true.
func (e *NotTableError) Is(target error) bool { return target == ErrNotDeltaTable }
