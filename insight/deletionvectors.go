package insight

import (
	"context"
	"math"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// The rows a deletion vector marks deleted stay in their data file, and the file is live:
// VACUUM cannot reclaim them. Only a rewrite can (REORG TABLE … APPLY (PURGE), or OPTIMIZE for a
// file past OptimizeDeletedRowsRatio), and then only a VACUUM once the rewrite is older than the
// retention deletes the old file and its vector. These figures say how much that is.

// OptimizeDeletedRowsRatio is the share of deleted rows past which OPTIMIZE rewrites a file
// with a deletion vector: Delta's spark.databricks.delta.optimize.maxDeletedRowsRatio (0.05),
// and Fabric's guidance (docs/insight.md): OPTIMIZE purges a file past 5 % deleted rows, so a
// separate REORG … APPLY (PURGE) is needed only for the rest.
const OptimizeDeletedRowsRatio = 0.05

// MostlyDeletedRatio is the share of deleted rows past which a file is kept mostly for rows
// nobody reads any more.
const MostlyDeletedRatio = 0.5

// DeletionVectors is what the table's live data files with deletion vectors hold. Present in a
// report when the table's protocol has the deletionVectors feature.
type DeletionVectors struct {
	// Files are the live data files with a deletion vector, and their bytes as the log
	// records them.
	Files Count `json:"files"`
	// VectorFiles are the deletion-vector files of the live files, as listed (--lite, which
	// lists nothing: their number only). An inline vector has none: InlineVectors counts them.
	VectorFiles   Count `json:"vectorFiles"`
	InlineVectors int64 `json:"inlineVectors"`
	// Rows is the rows (numRecords) of the files whose statistics say; DeletedRows the rows
	// their vectors mark deleted (the vectors' cardinality); DeletedShare is DeletedRows over
	// Rows.
	Rows         int64   `json:"rows"`
	DeletedRows  int64   `json:"deletedRows"`
	DeletedShare float64 `json:"deletedShare"`
	// DeletedBytes estimates the bytes of the deleted rows: each file's size times its share
	// of deleted rows (the rows of a file taken as equally large, as Delta estimates the size
	// of what a file still holds).
	DeletedBytes int64 `json:"deletedBytes"`
	// UnknownShare are the files whose share of deleted rows is unknown: their statistics
	// record no numRecords, or fewer rows than the vector marks deleted. They are in Files
	// only.
	UnknownShare Count `json:"unknownShare"`
	// PastOptimize are the files with more than OptimizeDeletedRowsRatio of their rows
	// deleted, which OPTIMIZE rewrites; MostlyDeleted those with more than MostlyDeletedRatio.
	PastOptimize  DeletedFiles `json:"pastOptimize"`
	MostlyDeleted DeletedFiles `json:"mostlyDeleted"`
	// Purge is what REORG TABLE … APPLY (PURGE), followed by a VACUUM once the rewrite is
	// older than the retention, would reclaim.
	Purge Purge `json:"purge"`
}

// DeletedFiles are files with deletion vectors and the estimated bytes of their deleted rows.
type DeletedFiles struct {
	Count
	DeletedBytes int64 `json:"deletedBytes"`
}

// Purge is what REORG TABLE … APPLY (PURGE) and a VACUUM after it would do: the purge rewrites
// every live file with a deletion vector into one without the deleted rows (tombstoning the
// old file and its vector); a VACUUM run once the purge is older than RetentionHours deletes
// the old files and the vector files.
type Purge struct {
	// Rewritten are the files the purge rewrites.
	Rewritten Count `json:"rewritten"`
	// Reclaimable is what that VACUUM deletes: the rewritten files and their vector files.
	Reclaimable Count `json:"reclaimable"`
	// WrittenBytes estimates what the purge writes: the rows left of each file (a file whose
	// share is unknown counts whole).
	WrittenBytes int64 `json:"writtenBytes"`
	// SavedBytes is Reclaimable.Bytes less WrittenBytes: what the table's storage shrinks by
	// for good; CostPerMonth is its cost at the report's price.
	SavedBytes   int64   `json:"savedBytes"`
	CostPerMonth float64 `json:"costPerMonth"`
	// RetentionHours is the retention the VACUUM after the purge must wait for: the report's.
	RetentionHours float64 `json:"retentionHours"`
}

func (d *DeletedFiles) add(size, deleted int64) {
	d.Count.add(size)
	d.DeletedBytes += deleted
}

// deletionVectorsOf reads the live adds of snap with their statistics (a second read of the
// log's file actions: the checkpoint's add columns only, with stats) and sums what their
// deletion vectors mark deleted; vectorFiles are the vector files of the live files the
// listing counted. Nil for a table without the deletionVectors feature, which cannot have
// any: nothing is read then.
func deletionVectorsOf(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, vectorFiles Count, retentionHours float64, price Price) (*DeletionVectors, error) {
	if !snap.HasFeature("deletionVectors") {
		return nil, nil
	}
	d := &DeletionVectors{VectorFiles: vectorFiles}
	var written int64
	// Streamed, nothing kept per file: a writer that gives a file a new vector removes its
	// (path, old vector) in the same commit (PROTOCOL.md, Deletion Vectors), so a path is live
	// under one vector and each file is counted once.
	err := snap.FilesWith(ctx, store, deltalog.FilesOptions{LiveOnly: true, NumRecords: true}, func(f deltalog.File) error {
		dv := f.DeletionVector
		if dv == nil {
			return nil
		}
		d.Files.add(f.Size)
		if dv.StorageType == "i" {
			d.InlineVectors++
		}
		if f.NumRecords <= 0 || dv.Cardinality < 0 || dv.Cardinality > f.NumRecords {
			d.UnknownShare.add(f.Size)
			written += f.Size
			return nil
		}
		share := float64(dv.Cardinality) / float64(f.NumRecords)
		deleted := int64(math.Round(float64(f.Size) * share))
		d.Rows += f.NumRecords
		d.DeletedRows += dv.Cardinality
		d.DeletedBytes += deleted
		written += f.Size - deleted
		if share > OptimizeDeletedRowsRatio {
			d.PastOptimize.add(f.Size, deleted)
		}
		if share > MostlyDeletedRatio {
			d.MostlyDeleted.add(f.Size, deleted)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if d.Rows > 0 {
		d.DeletedShare = float64(d.DeletedRows) / float64(d.Rows)
	}
	p := &d.Purge
	p.Rewritten = d.Files
	p.Reclaimable = Count{Files: d.Files.Files + d.VectorFiles.Files, Bytes: d.Files.Bytes + d.VectorFiles.Bytes}
	p.WrittenBytes = written
	p.SavedBytes = p.Reclaimable.Bytes - written
	p.CostPerMonth = price.cost(max(p.SavedBytes, 0))
	p.RetentionHours = retentionHours
	return d, nil
}
