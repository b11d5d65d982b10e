package deltalog

import (
	"context"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// LogFileRefs is CommitFileRefs for every commit file in the log, oldest first: the commits
// after the checkpoint come from the snapshot, which parsed them while loading, and only the
// older ones are read.
func (s *Snapshot) LogFileRefs(ctx context.Context, store storage.Store, fn func(LogRef) error) error {
	parsed := make(map[int64]*commit, len(s.commits))
	for i := range s.commits {
		parsed[s.commits[i].file.Version] = &s.commits[i]
	}
	for _, f := range s.Segment.AllCommits {
		c, ok := parsed[f.Version]
		if !ok {
			read, _, _, err := readCommit(ctx, store, f)
			if err != nil {
				return err
			}
			c = &read
		}
		if err := commitFileRefs(s.Root, c, fn); err != nil {
			return err
		}
	}
	return nil
}

// CommitOperation is the operation a commit's commitInfo names, with the commit's time by
// History's rule (Spark's): its in-commit timestamp when the table has them on, else its file's
// modification time made strictly increasing.
type CommitOperation struct {
	Version   int64
	Operation string
	Timestamp time.Time
	// Engine is the commit's engineInfo ("" when it names none).
	Engine string
}

// Operations calls fn with the operation of each commit in the log, newest first, until fn
// returns false or limit commits (all when limit <= 0) were seen. Commits after the checkpoint
// come from the snapshot; only older ones are read.
func (s *Snapshot) Operations(ctx context.Context, store storage.Store, limit int, fn func(CommitOperation) bool) error {
	parsed := make(map[int64]*CommitInfo, len(s.commits))
	for i := range s.commits {
		parsed[s.commits[i].file.Version] = s.commits[i].commitInfo
	}
	all := s.Segment.AllCommits
	times := fileTimes(all)
	ict := s.InCommitTimestampsEnabled()
	for i, n := len(all)-1, 0; i >= 0 && (limit <= 0 || n < limit); i, n = i-1, n+1 {
		f := all[i]
		info, ok := parsed[f.Version]
		if !ok {
			err := readJSONActions(ctx, store, f.Key, func(a *Action) error {
				if a.CommitInfo != nil && info == nil {
					info = a.CommitInfo
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		op := CommitOperation{Version: f.Version, Timestamp: times[f.Version]}
		if info != nil {
			op.Operation, op.Engine = info.Operation, info.EngineInfo
			if ict && info.InCommitTimestamp != nil {
				op.Timestamp = time.UnixMilli(*info.InCommitTimestamp).UTC()
			}
		}
		if !fn(op) {
			return nil
		}
	}
	return nil
}
