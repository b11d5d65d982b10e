package iceberg

import (
	"fmt"
	"strconv"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/strictjson"
)

// What converters record of the Delta version they converted, as read in their source:
//
//   - Delta UniForm (delta-io/delta, iceberg/.../IcebergConversionTransaction.scala, commit):
//     the Iceberg table properties "delta-version" (the Delta version converted) and
//     "delta-timestamp" (its commit time, milliseconds since the epoch), set in the same
//     Iceberg transaction as the snapshot, so they describe the current metadata file's
//     current snapshot (IcebergConverter.DELTA_VERSION_PROPERTY, DELTA_TIMESTAMP_PROPERTY).
//   - Apache XTable (apache/incubator-xtable, TableSyncMetadata, IcebergConversionTarget,
//     IcebergDataFileUpdatesSync): "XTABLE_METADATA", a JSON object, both in the table
//     properties and in the summary of each snapshot it commits: lastInstantSynced (the
//     source commit's instant, ISO 8601), sourceTableFormat ("DELTA") and sourceIdentifier
//     (for a Delta source, the Delta version as a decimal string; DeltaConversionSource.
//     getCommitIdentifier). XTable before sourceIdentifier recorded the instant only.
//   - Fabric's Delta-to-Iceberg virtualization: its documentation names no property; a
//     conversion log file beside the metadata holds the time of the latest conversion, in
//     a format that is not published. Nothing is read from it.
const (
	uniformVersionKey   = "delta-version"
	uniformTimestampKey = "delta-timestamp"
	xtableKey           = "XTABLE_METADATA"
)

type xtableMetadata struct {
	LastInstantSynced *string `json:"lastInstantSynced"`
	Version           *int    `json:"version"`
	SourceTableFormat *string `json:"sourceTableFormat"`
	SourceIdentifier  *string `json:"sourceIdentifier"`
}

// conversionOf reads what a converter recorded of the current snapshot. A property that is
// there but cannot be read is noted and not used: the caller then protects by data files.
// When two converters disagree, the older Delta version is kept (it protects more).
func conversionOf(t *Table, notes []string) (*Conversion, []string) {
	var found []*Conversion
	props := t.meta.Properties
	if v, ok := props[uniformVersionKey]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			notes = append(notes, fmt.Sprintf("%s: properties.%s = %q is not a Delta version: not used", t.Current.Key, uniformVersionKey, v))
		} else {
			c := &Conversion{Engine: "Delta UniForm", Version: &n, Property: "properties." + uniformVersionKey, File: t.Current.Key}
			if ts, ok := props[uniformTimestampKey]; ok {
				if ms, err := strconv.ParseInt(ts, 10, 64); err == nil && ms >= 0 {
					c.CommitTime = time.UnixMilli(ms).UTC()
				} else {
					notes = append(notes, fmt.Sprintf("%s: properties.%s = %q is not a time in milliseconds: not used", t.Current.Key, uniformTimestampKey, ts))
				}
			}
			found = append(found, c)
		}
	}
	// XTable: the snapshot's summary first (it belongs to this very snapshot), then the
	// table properties.
	var xt []struct{ where, raw string }
	if cur := t.meta.current(); cur != nil {
		if raw, ok := cur.Summary[xtableKey]; ok {
			xt = append(xt, struct{ where, raw string }{"summary." + xtableKey, raw})
		}
	}
	if raw, ok := props[xtableKey]; ok {
		xt = append(xt, struct{ where, raw string }{"properties." + xtableKey, raw})
	}
	for _, x := range xt {
		c, err := readXTable(x.raw)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %s cannot be read (%v): not used", t.Current.Key, x.where, err))
			continue
		}
		if c == nil {
			continue
		}
		c.Property, c.File = x.where, t.Current.Key
		found = append(found, c)
		break
	}
	var best *Conversion
	for _, c := range found {
		switch {
		case best == nil:
			best = c
		case c.Version != nil && (best.Version == nil || *c.Version < *best.Version):
			notes = append(notes, fmt.Sprintf("%s: %s says Delta version %d, %s says %s: the older is used", t.Current.Key, c.Property, *c.Version, best.Property, versionString(best.Version)))
			best = c
		}
	}
	return best, notes
}

func versionString(v *int64) string {
	if v == nil {
		return "none"
	}
	return strconv.FormatInt(*v, 10)
}

// readXTable reads XTABLE_METADATA. It returns nil, nil for a sync from another format than
// Delta.
func readXTable(raw string) (*Conversion, error) {
	var x xtableMetadata
	if err := strictjson.Unmarshal([]byte(raw), &x); err != nil {
		return nil, err
	}
	if x.SourceTableFormat != nil && *x.SourceTableFormat != "DELTA" {
		return nil, nil
	}
	c := &Conversion{Engine: "Apache XTable"}
	if x.LastInstantSynced == nil {
		return nil, fmt.Errorf("no lastInstantSynced")
	}
	at, err := time.Parse(time.RFC3339Nano, *x.LastInstantSynced)
	if err != nil {
		return nil, fmt.Errorf("lastInstantSynced %q: %v", *x.LastInstantSynced, err)
	}
	c.CommitTime = at.UTC()
	if x.SourceIdentifier != nil {
		n, err := strconv.ParseInt(*x.SourceIdentifier, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("sourceIdentifier %q is not a Delta version", *x.SourceIdentifier)
		}
		c.Version = &n
	}
	return c, nil
}

// Lag says how far the Iceberg view is behind the Delta table.
type Lag struct {
	// Versions is the number of Delta versions not yet converted; nil when the converted
	// version is not recorded.
	Versions *int64
	// Behind is the time between the latest Delta commit and the Delta commit converted, or,
	// when that commit's time is not recorded, the Iceberg snapshot's own time (written after
	// the commit it converted, so Behind is then a lower bound: AtLeast is true). Never
	// negative.
	Behind  time.Duration
	AtLeast bool
}

// LagOf computes the lag of t behind the Delta table whose latest version is latestVersion,
// committed at latestCommit. It reads nothing and no clock.
func LagOf(t *Table, latestVersion int64, latestCommit time.Time) Lag {
	var l Lag
	since := time.Time{}
	if c := t.Conversion; c != nil {
		if c.Version != nil {
			v := max(latestVersion-*c.Version, 0)
			l.Versions = &v
		}
		since = c.CommitTime
	}
	if since.IsZero() && t.Snapshot != nil {
		since, l.AtLeast = t.Snapshot.Timestamp, true
	}
	if !since.IsZero() {
		l.Behind = max(latestCommit.Sub(since), 0)
	}
	return l
}
