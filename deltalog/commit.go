package deltalog

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deltavacuum/deltavacuum/internal/buildinfo"
	"github.com/deltavacuum/deltavacuum/storage"
)

// ErrVersionExists is returned (wrapped) when a commit's version was taken by another writer.
var ErrVersionExists = errors.New("commit version already exists")

// EncodeCommit encodes actions as newline-delimited JSON, one action per line, in order.
func EncodeCommit(actions []any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, a := range actions {
		if err := enc.Encode(a); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// WriteCommit writes version v with put-if-absent; ErrVersionExists when it is taken.
func WriteCommit(ctx context.Context, store storage.Store, v int64, actions []any) error {
	data, err := EncodeCommit(actions)
	if err != nil {
		return err
	}
	return writeCommit(ctx, store, v, data)
}

// writeCommit writes data as version v with put-if-absent; ErrVersionExists when it is taken.
func writeCommit(ctx context.Context, store storage.Store, v int64, data []byte) error {
	if err := store.PutIfAbsent(ctx, CommitKey(v), data); err != nil {
		if errors.Is(err, storage.ErrExist) {
			return fmt.Errorf("%w: version %d of %s", ErrVersionExists, v, store.Location())
		}
		return fmt.Errorf("writing version %d of %s: %w", v, store.Location(), err)
	}
	return nil
}

// CommitRequest is what a writer wants to commit: the commitInfo fields and the actions after
// it.
type CommitRequest struct {
	Operation     string
	Parameters    map[string]any
	Metrics       map[string]string
	IsBlindAppend bool
	Actions       []any
}

// CommitOptions control Commit.
type CommitOptions struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
	// MaxAttempts bounds the retries when other writers take the version (default 10).
	MaxAttempts int
	// EngineInfo names this program in commitInfo.
	EngineInfo string
}

// ErrCommitRace is returned (wrapped) when every attempt lost the version to another writer.
var ErrCommitRace = errors.New("lost the commit race")

// EngineInfo is the commitInfo engineInfo of this program: deltavacuum/VERSION, the version
// of the deltavacuum module in the running binary (internal/buildinfo).
var EngineInfo = buildinfo.EngineInfo()

// commitInfo is written in this field order, as Spark writes it.
type commitInfo struct {
	InCommitTimestamp   *int64            `json:"inCommitTimestamp,omitempty"`
	Timestamp           int64             `json:"timestamp"`
	Operation           string            `json:"operation"`
	OperationParameters map[string]any    `json:"operationParameters"`
	ReadVersion         int64             `json:"readVersion"`
	IsolationLevel      string            `json:"isolationLevel"`
	IsBlindAppend       bool              `json:"isBlindAppend"`
	OperationMetrics    map[string]string `json:"operationMetrics,omitempty"`
	EngineInfo          string            `json:"engineInfo"`
	TxnID               string            `json:"txnId"`
}

// Commit appends a new version to the table. build is called with the latest snapshot and
// returns what to commit; when another writer takes the version first, its commit is read
// and build is called again with the new snapshot, up to MaxAttempts times. The writer
// features are checked before every attempt. commitInfo is the first action, with a strictly
// increasing inCommitTimestamp when the table has in-commit timestamps enabled.
func Commit(ctx context.Context, store storage.Store, build func(*Snapshot) (*CommitRequest, error), opts CommitOptions) (int64, error) {
	v, _, err := CommitFrom(ctx, store, nil, build, opts)
	return v, err
}

// CommitFrom is Commit starting from base, a snapshot the caller has read already (the one a
// plan was made from, say): instead of reading the whole log again, base is advanced to the
// latest version (Advance: one listing, then only the commits after base.Version), and build
// is called with that. With base nil the latest snapshot is read in full. It returns the
// version written and the snapshot the commit was built on (that version less one), whose
// commits after base.Version a caller may take instead of reading them again
// (Snapshot.HeldCommitRefs).
func CommitFrom(ctx context.Context, store storage.Store, base *Snapshot, build func(*Snapshot) (*CommitRequest, error), opts CommitOptions) (int64, *Snapshot, error) {
	c, err := CommitAfter(ctx, store, base, build, opts)
	if err != nil {
		return -1, nil, err
	}
	return c.Version, c.Base, nil
}

// Committed is a commit CommitAfter wrote.
type Committed struct {
	Version int64
	// Base is the snapshot the commit was built on (version Version-1).
	Base *Snapshot
	// Snapshot is Base with the commit applied, decoded from the bytes written (not read back
	// from the store): a later commit of the same writer starts from it.
	Snapshot *Snapshot
	// Size is the size of the commit file written.
	Size int64
}

// CommitAfter is CommitFrom, and says what it wrote (Committed). Where the store lists a
// directory from a name on, base is advanced by a listing of the log from its version's name
// (Snapshot.AdvanceTail), not of the whole log.
func CommitAfter(ctx context.Context, store storage.Store, base *Snapshot, build func(*Snapshot) (*CommitRequest, error), opts CommitOptions) (*Committed, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 10
	}
	if opts.EngineInfo == "" {
		opts.EngineInfo = EngineInfo
	}
	var snap *Snapshot
	for attempt := 0; attempt < opts.MaxAttempts; attempt++ {
		var err error
		switch {
		case snap == nil && base == nil:
			snap, err = Load(ctx, store)
		case snap == nil:
			snap, _, err = base.AdvanceTail(ctx, store)
		default:
			// Another writer took the version: read just its commit, not the whole log
			// again, so that a busy table does not win every race.
			next, nerr := snap.next(ctx, store)
			if errors.Is(nerr, storage.ErrNotExist) {
				next, _, nerr = snap.AdvanceTail(ctx, store) // not visible yet: list the log
			}
			snap, err = next, nerr
		}
		if err != nil {
			return nil, err
		}
		if err := snap.CheckVacuum(); err != nil {
			return nil, err
		}
		req, err := build(snap)
		if err != nil {
			return nil, err
		}
		ci := commitInfo{
			Timestamp:           opts.Now().UnixMilli(),
			Operation:           req.Operation,
			OperationParameters: req.Parameters,
			ReadVersion:         snap.Version,
			IsolationLevel:      "SnapshotIsolation",
			IsBlindAppend:       req.IsBlindAppend,
			OperationMetrics:    req.Metrics,
			EngineInfo:          opts.EngineInfo,
			TxnID:               newTxnID(),
		}
		if ci.OperationParameters == nil {
			ci.OperationParameters = map[string]any{}
		}
		if snap.InCommitTimestampsEnabled() {
			prev, err := snap.latestInCommitTimestamp(ctx, store)
			if err != nil {
				return nil, err
			}
			ict := max(ci.Timestamp, prev+1)
			ci.InCommitTimestamp, ci.Timestamp = &ict, ict
		}
		actions := append([]any{map[string]any{"commitInfo": ci}}, req.Actions...)
		v := snap.Version + 1
		data, err := EncodeCommit(actions)
		if err != nil {
			return nil, err
		}
		err = writeCommit(ctx, store, v, data)
		if err == nil {
			lf := LogFile{Key: CommitKey(v), Kind: KindCommit, Version: v, Size: int64(len(data))}
			after, err := snap.applyWritten(ctx, lf, data)
			if err != nil {
				return nil, err
			}
			return &Committed{Version: v, Base: snap, Snapshot: after, Size: lf.Size}, nil
		}
		if !errors.Is(err, ErrVersionExists) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: %s: another writer took the next version %d times in a row; nothing was written, try again", ErrCommitRace, store.Location(), opts.MaxAttempts)
}

func newTxnID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// InCommitTimestampsEnabled reports whether commits of this table carry in-commit timestamps.
func (s *Snapshot) InCommitTimestampsEnabled() bool {
	v, _ := s.Property(PropEnableInCommitTimestamp)
	return strings.EqualFold(v, "true") && s.HasFeature("inCommitTimestamp")
}

// latestInCommitTimestamp returns the in-commit timestamp of the latest version (0 if none).
func (s *Snapshot) latestInCommitTimestamp(ctx context.Context, store storage.Store) (int64, error) {
	if n := len(s.commits); n > 0 && s.commits[n-1].file.Version == s.Version {
		if ci := s.commits[n-1].commitInfo; ci != nil && ci.InCommitTimestamp != nil {
			return *ci.InCommitTimestamp, nil
		}
		return 0, nil
	}
	for _, c := range s.Segment.AllCommits {
		if c.Version == s.Version {
			cm, _, _, err := readCommit(ctx, store, c)
			if err != nil {
				return 0, err
			}
			if cm.commitInfo != nil && cm.commitInfo.InCommitTimestamp != nil {
				return *cm.commitInfo.InCommitTimestamp, nil
			}
		}
	}
	return 0, nil
}
