package deltalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/deltavacuum/deltavacuum/internal/parquetguard"
	"github.com/deltavacuum/deltavacuum/storage"
)

// readParquetActions streams the rows of a Parquet checkpoint file (classic, one part of a
// multi-part checkpoint, V2 top-level file or sidecar) as actions, calling fn once per row
// whose action kind is in want. Rows come in file order.
//
// Only the leaf columns needed for the wanted kinds are read: for add and remove the fields
// that identify a file and its deletion vector (never stats or partition values), for
// metaData, protocol, sidecar and checkpointMetadata their whole group. The needed column
// chunks of one row group are held in memory, compressed, and decoded one page at a time, so
// memory is bounded by a row group, not by the number of rows in the file.
//
// A file that is not Parquet, is truncated or whose columns have unexpected types yields an
// error wrapping ErrCorrupt; an error of the underlying reader is returned as is.
func readParquetActions(ctx context.Context, r storage.Reader, want Kinds, fn func(*Action) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	src := parquetguard.NewSource(r)
	f, err := src.Open()
	if err != nil {
		return pqErr(err)
	}
	p, err := newPQPlan(f, want)
	if err != nil {
		return err
	}
	if len(p.cursors) == 0 {
		// None of the wanted groups is in the file (a sidecar read for metadata, say). A file
		// read for its file actions that has no action column at all accounts for none of
		// its rows.
		if len(p.missing) > 0 && f.NumRows() > 0 {
			p.facts.unaccounted, p.facts.first = f.NumRows(), "row 0 of row group 0"
		}
		return pqMissingColumnsRule(p.facts)
	}
	for i, rg := range f.RowGroups() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := p.readRowGroup(ctx, src, f, i, rg, fn); err != nil {
			return err
		}
	}
	return pqMissingColumnsRule(p.facts)
}

// pqCorruptf returns an error wrapping ErrCorrupt.
func pqCorruptf(format string, args ...any) error {
	return fmt.Errorf("parquet checkpoint: "+format+": %w", append(args, ErrCorrupt)...)
}

// pqErr turns an error of parquetguard into ours: a CorruptError wraps ErrCorrupt, a
// ReadError keeps the store's error.
func pqErr(err error) error {
	var c *parquetguard.CorruptError
	if errors.As(err, &c) {
		return pqCorruptf("%s", c.Msg)
	}
	var r *parquetguard.ReadError
	if errors.As(err, &r) {
		return fmt.Errorf("parquet checkpoint: %s: %w", r.What, r.Err)
	}
	return err
}

// pqFail turns an error reported by parquet-go while doing what into ours: the reader's own
// error when there was one, ErrCorrupt otherwise.
func pqFail(src *parquetguard.Source, what string, err error) error {
	return pqErr(src.Fail(what, err))
}
