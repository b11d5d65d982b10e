package deltalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// CommitTime is the timestamp of one commit, as VACUUM LITE orders commits.
type CommitTime struct {
	Version   int64
	Timestamp time.Time
}

// CommitTimestamps returns the timestamp of every commit file in the log, in version order:
// the in-commit timestamp where the table has them enabled and the commit carries one,
// otherwise the commit file's modification time, made strictly increasing (each at least one
// millisecond after the one before), as the protocol prescribes for file times.
func (s *Snapshot) CommitTimestamps(ctx context.Context, store storage.Store) ([]CommitTime, error) {
	ict := s.InCommitTimestampsEnabled()
	out := make([]CommitTime, 0, len(s.Segment.AllCommits))
	var prev time.Time
	for i, c := range s.Segment.AllCommits {
		ts := c.ModTime
		if ict {
			var info *CommitInfo
			if held := s.heldCommit(c.Version); held != nil {
				info = held.commitInfo // read with the snapshot: not read again
			} else if err := readJSONActions(ctx, store, c.Key, func(a *Action) error {
				if a.CommitInfo != nil && info == nil {
					info = a.CommitInfo
				}
				return nil
			}); err != nil {
				return nil, err
			}
			if info != nil && info.InCommitTimestamp != nil {
				ts = time.UnixMilli(*info.InCommitTimestamp)
			}
		}
		ts = nextCommitTime(i, ts, prev)
		prev = ts
		out = append(out, CommitTime{Version: c.Version, Timestamp: ts})
	}
	return out, nil
}

// nextCommitTime is the time of the i-th commit (oldest first) read as ts, after a commit of
// time prev: to the millisecond, and at least one millisecond after prev (the protocol's rule
// for file times, which a clock set back or a copy of the log can disorder).
func nextCommitTime(i int, ts, prev time.Time) time.Time {
	ts = ts.Truncate(time.Millisecond)
	if i > 0 && !ts.After(prev) {
		ts = prev.Add(time.Millisecond)
	}
	return ts
}

// fileTimes are the times of the commits files (oldest first) by their files alone: the
// modification times, made strictly increasing as CommitTimestamps makes them. Every front end
// shows a version's time by one rule, Spark's: this one, unless the commit carries an
// in-commit timestamp of a table that has them on (History, Operations, CommitTimestamps).
func fileTimes(files []LogFile) map[int64]time.Time {
	out := make(map[int64]time.Time, len(files))
	var prev time.Time
	for i, f := range files {
		prev = nextCommitTime(i, f.ModTime, prev)
		out[f.Version] = prev.UTC()
	}
	return out
}

// LastVacuumInfoKey is the key of the file recording how far VACUUM has covered the log.
const LastVacuumInfoKey = LogDir + "_last_vacuum_info"

// LastVacuumInfo is _delta_log/_last_vacuum_info.
type LastVacuumInfo struct {
	LatestCommitVersionOutsideOfRetentionWindow *int64 `json:"latestCommitVersionOutsideOfRetentionWindow,omitempty"`
}

// ReadLastVacuumInfo reads _delta_log/_last_vacuum_info. A missing, empty or corrupt file is
// no information (nil), as the reference treats it.
func ReadLastVacuumInfo(ctx context.Context, store storage.Store) (*int64, error) {
	b, err := storage.ReadAll(ctx, store, LastVacuumInfoKey)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s of %s: %w", LastVacuumInfoKey, store.Location(), err)
	}
	var info LastVacuumInfo
	if unmarshalStrict(b, &info) != nil {
		return nil, nil
	}
	return info.LatestCommitVersionOutsideOfRetentionWindow, nil
}

// WriteLastVacuumInfo records that VACUUM has covered the log up to version v.
func WriteLastVacuumInfo(ctx context.Context, store storage.Store, v int64) error {
	b, err := json.Marshal(LastVacuumInfo{LatestCommitVersionOutsideOfRetentionWindow: &v})
	if err != nil {
		return err
	}
	if err := store.Put(ctx, LastVacuumInfoKey, b); err != nil {
		return fmt.Errorf("writing %s of %s: %w", LastVacuumInfoKey, store.Location(), err)
	}
	// On local disk Spark (through Hadoop) leaves a checksum beside the file; once the content
	// changes it no longer matches, and Hadoop would reject the file as corrupt. Remove it.
	if strings.HasPrefix(store.Location(), "file:") {
		crc := LogDir + "." + strings.TrimPrefix(LastVacuumInfoKey, LogDir) + ".crc"
		res, err := store.Delete(ctx, []string{crc})
		if err == nil && len(res) == 1 {
			err = res[0].Err
		}
		if err != nil {
			return fmt.Errorf("removing the stale checksum %s of %s: %w", crc, store.Location(), err)
		}
	}
	return nil
}

// CommitFileRefs calls fn with each remove and cdc action of commit f, decoded; the DV file
// key of a remove is given too. It serves VACUUM LITE, which takes its candidates from the log.
func CommitFileRefs(ctx context.Context, store storage.Store, root Root, f LogFile, fn func(r LogRef) error) error {
	c, _, _, err := readCommit(ctx, store, f)
	if err != nil {
		return err
	}
	return commitFileRefs(root, &c, fn)
}

// CommitFileRefs is the package function CommitFileRefs, taking commit f from those s holds
// (read with the snapshot) rather than reading it again when s holds it.
func (s *Snapshot) CommitFileRefs(ctx context.Context, store storage.Store, f LogFile, fn func(r LogRef) error) error {
	if c := s.heldCommit(f.Version); c != nil && c.file.Key == f.Key {
		return commitFileRefs(s.Root, c, fn)
	}
	return CommitFileRefs(ctx, store, s.Root, f, fn)
}

// commitFileRefs is CommitFileRefs of a commit already read.
func commitFileRefs(root Root, c *commit, fn func(r LogRef) error) error {
	f := c.file
	for i := range c.removes {
		rm := &c.removes[i]
		key, inside, err := root.Key(rm.Path)
		if err != nil {
			return fmt.Errorf("commit %s: %w", f.Key, err)
		}
		dvKey, _, err := root.DVKey(rm.DeletionVector)
		if err != nil {
			return fmt.Errorf("commit %s: %w", f.Key, err)
		}
		ref := LogRef{Version: f.Version, DVKey: dvKey}
		if inside {
			ref.Key = key
		}
		if rm.DeletionTimestamp != nil {
			ref.DeletionTimestamp = *rm.DeletionTimestamp
		}
		if rm.Size != nil {
			ref.Size = *rm.Size
		}
		if err := fn(ref); err != nil {
			return err
		}
	}
	for i := range c.cdcs {
		key, inside, err := root.Key(c.cdcs[i].Path)
		if err != nil {
			return fmt.Errorf("commit %s: %w", f.Key, err)
		}
		if !inside {
			continue
		}
		if err := fn(LogRef{Version: f.Version, Key: key, CDC: true, Size: c.cdcs[i].Size}); err != nil {
			return err
		}
	}
	return nil
}

// LogRef is a file a remove or cdc action of one commit names.
type LogRef struct {
	Version int64
	// Key of the file, empty when it lies outside the table.
	Key string
	// DVKey is the deletion-vector file of a remove, if it has one in the table.
	DVKey             string
	CDC               bool
	DeletionTimestamp int64
	Size              int64
}
