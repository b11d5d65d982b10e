package converted

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/internal/strictjson"
	"github.com/deltavacuum/deltavacuum/storage"
)

// OneLakeConversionLog is the file OneLake writes in the virtual Delta log of an Iceberg
// shortcut.
const OneLakeConversionLog = "_delta_log/latest_conversion_log.txt"

// XTableKey is the table property and commit tag Apache XTable writes.
const XTableKey = "XTABLE_METADATA"

// Conversion says that a Delta log translates a table of another format.
type Conversion struct {
	// Engine wrote the Delta log: "OneLake" or "Apache XTable".
	Engine string
	// SourceFormat is the format of the table translated ("ICEBERG", "HUDI"); empty when the
	// converter does not say.
	SourceFormat string
	// Owner is what owns the data files: the engine that writes the source table.
	Owner string
	// Advice is one line saying where to vacuum the table instead.
	Advice string
	// Evidence names what was seen: a file, a property.
	Evidence []string
}

type xtableMetadata struct {
	SourceTableFormat *string `json:"sourceTableFormat"`
	LastInstantSynced *string `json:"lastInstantSynced"`
}

// Detect says whether the Delta table in store, whose snapshot snap has been read, is a
// translation of another format. It returns nil for a table written as Delta. snap may be nil
// (a log that cannot be read: OneLake writes the conversion log even when its conversion
// failed), and then only the file is looked for.
func Detect(ctx context.Context, store storage.Store, snap *deltalog.Snapshot) (*Conversion, error) {
	var c *Conversion
	found, err := conversionLogListed(ctx, store, snap)
	switch {
	case err == nil && found:
		c = &Conversion{
			Engine:       "OneLake",
			SourceFormat: "ICEBERG",
			Owner:        "the engine that writes the Iceberg table this shortcut points to",
			Advice:       "this Delta log is OneLake's virtual translation of an Iceberg table: vacuum it in the engine that writes that table (expire its snapshots, remove its orphan files), not through the shortcut",
			Evidence:     []string{OneLakeConversionLog},
		}
	case err != nil:
		return nil, fmt.Errorf("looking for %s in %s: %w", OneLakeConversionLog, store.Location(), err)
	}
	if snap == nil {
		return c, nil
	}
	raw, ok := snap.Property(XTableKey)
	if !ok {
		return c, nil
	}
	format := ""
	var x xtableMetadata
	if err := strictjson.Unmarshal([]byte(raw), &x); err == nil && x.SourceTableFormat != nil {
		format = *x.SourceTableFormat
	}
	if format == "DELTA" {
		// XTable names Delta as the source of an Iceberg or Hudi target, never of a Delta one:
		// a mark copied from elsewhere, not a translation.
		return c, nil
	}
	ev := fmt.Sprintf("metaData.configuration.%s (version %d)", XTableKey, snap.MetadataVersion)
	if c != nil {
		// OneLake translates with XTable: one conversion, two marks.
		c.Evidence = append(c.Evidence, ev)
		return c, nil
	}
	src := "the source table"
	if format != "" {
		src = "the " + format + " table"
	}
	return &Conversion{
		Engine:       "Apache XTable",
		SourceFormat: format,
		Owner:        "the engine that writes " + src,
		Advice:       "this Delta log is Apache XTable's sync of " + src + ": vacuum it in the engine that writes that table, then let XTable sync again; a Delta VACUUM here would delete files the source still reads",
		Evidence:     []string{ev},
	}, nil
}

// othersListedAtMost is how many names of other files a snapshot's segment keeps
// (deltalog.Segment.Others): a list that long may have left the conversion log out, and it is
// looked for (TestDetectBehindManyStrayFiles).
const othersListedAtMost = 1000

// conversionLogListed reports whether OneLake's conversion log is in the log: from the listing
// the snapshot was read from (deltalog.Segment.Others: no request), or, without a snapshot, by
// looking for it (or when the listing kept too many other names to tell).
func conversionLogListed(ctx context.Context, store storage.Store, snap *deltalog.Snapshot) (bool, error) {
	if snap != nil && snap.Segment != nil {
		others := snap.Segment.Others
		if slices.Contains(others, strings.TrimPrefix(OneLakeConversionLog, deltalog.LogDir)) {
			return true, nil
		}
		if len(others) < othersListedAtMost {
			return false, nil
		}
		// The listing kept only the first names: the conversion log may be past them.
	}
	o, err := store.Stat(ctx, OneLakeConversionLog)
	switch {
	case errors.Is(err, storage.ErrNotExist):
		return false, nil
	case err != nil:
		return false, err
	}
	return !o.IsDir, nil
}
