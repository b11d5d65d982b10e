package run

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/deltavacuum/deltavacuum/storage"
)

// The report of the last undo of a run, kept beside its record (<id>.undo.json): part of the
// run's state (state.go), written by package undo.

// How a file was, or would be, brought back.
const (
	ViaTrash    = "trash"
	ViaRecovery = "store recovery"
)

// Outcome of one file.
const (
	OutcomeRestored     = "restored"
	OutcomeWouldRestore = "would restore"
	OutcomePresent      = "present"
	OutcomeLost         = "not restorable"
	OutcomeFailed       = "failed"
)

// UndoFile is what an undo did with one file of the run.
type UndoFile struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	Outcome string `json:"outcome"`
	// Why explains an outcome other than restored.
	Why string `json:"why,omitempty"`
	// Companion is set for a Hadoop checksum companion deleted with its file: the run counts
	// its files without them, and so does every report of it.
	Companion bool `json:"checksumCompanion,omitempty"`
}

// UndoReport is the result of an undo.
type UndoReport struct {
	Run    string    `json:"run"`
	Table  string    `json:"table"`
	At     time.Time `json:"at"`
	DryRun bool      `json:"dryRun"`
	Via    string    `json:"via"`
	// Restored counts the files brought back (or, in a dry run, that would be tried).
	NumRestored   int64 `json:"numRestored"`
	BytesRestored int64 `json:"bytesRestored"`
	// NumCompanions counts the Hadoop checksum companions among the files restored.
	NumCompanions int64 `json:"numChecksumCompanions"`
	// NumPresent are files that are there already (restored before, or written again: left
	// as they are); NumLost those nothing can bring back; NumFailed those a request failed.
	NumPresent int64      `json:"numPresent"`
	NumLost    int64      `json:"numNotRestorable"`
	NumFailed  int64      `json:"numFailed"`
	Files      []UndoFile `json:"files"`
}

func reportKey(id string) string { return RunsDir + id + undoSuffix }

// WriteUndoReport keeps rep beside the record of its run.
func WriteUndoReport(ctx context.Context, store storage.Store, rep *UndoReport) error {
	data, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	if err := store.Put(ctx, reportKey(rep.Run), data); err != nil {
		return fmt.Errorf("the undo ran, but its report could not be kept at %s: %w", reportKey(rep.Run), err)
	}
	return nil
}

// ReadUndoReport reads the report of the last undo of run id.
func ReadUndoReport(ctx context.Context, store storage.Store, id string) (*UndoReport, error) {
	data, err := storage.ReadAll(ctx, store, reportKey(id))
	if err != nil {
		return nil, err
	}
	var rep UndoReport
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%s: %w", reportKey(id), err)
	}
	if rep.Run != id || !strings.HasPrefix(reportKey(id), RunsDir) {
		return nil, fmt.Errorf("%s names run %q", reportKey(id), rep.Run)
	}
	return &rep, nil
}
