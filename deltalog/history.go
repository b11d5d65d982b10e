package deltalog

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/deltavacuum/deltavacuum/storage"
)

// HistoryEntry is one row of DESCRIBE HISTORY.
type HistoryEntry struct {
	Version             int64           `json:"version"`
	Timestamp           time.Time       `json:"timestamp"`
	Operation           string          `json:"operation"`
	OperationParameters json.RawMessage `json:"operationParameters"`
	OperationMetrics    json.RawMessage `json:"operationMetrics"`
	EngineInfo          string          `json:"engineInfo,omitempty"`
	ReadVersion         *int64          `json:"readVersion,omitempty"`
	IsolationLevel      string          `json:"isolationLevel,omitempty"`
	IsBlindAppend       *bool           `json:"isBlindAppend,omitempty"`
	UserMetadata        string          `json:"userMetadata,omitempty"`
}

// History returns the commits of the table newest first, at most limit of them (all when
// limit <= 0). Each timestamp is Spark's: the commit file's modification time, made strictly
// increasing (fileTimes, as VACUUM LITE and inspect's horizon read them), unless the table has
// in-commit timestamps on (its newest commit carries one), then the commit's in-commit
// timestamp where it has one. The commitInfo's own timestamp (the writer's clock when it began)
// is not a version's time.
func History(ctx context.Context, store storage.Store, limit int) ([]HistoryEntry, error) {
	seg, err := ListLog(ctx, store)
	if err != nil {
		return nil, err
	}
	times := fileTimes(seg.AllCommits)
	ict := false // the table has in-commit timestamps on: its newest commit carries one
	commits := append([]LogFile(nil), seg.AllCommits...)
	sort.Slice(commits, func(i, j int) bool { return commits[i].Version > commits[j].Version })
	if limit > 0 && len(commits) > limit {
		commits = commits[:limit]
	}
	out := make([]HistoryEntry, 0, len(commits))
	for i, c := range commits {
		e := HistoryEntry{Version: c.Version, Timestamp: times[c.Version], OperationParameters: json.RawMessage("{}"), OperationMetrics: json.RawMessage("{}")}
		var info *CommitInfo
		err := readJSONActions(ctx, store, c.Key, func(a *Action) error {
			if a.CommitInfo != nil && info == nil {
				info = a.CommitInfo
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if info != nil {
			var f struct {
				OperationParameters jsontext.Value `json:"operationParameters"`
				OperationMetrics    jsontext.Value `json:"operationMetrics"`
				EngineInfo          string         `json:"engineInfo"`
				ReadVersion         *int64         `json:"readVersion"`
				IsolationLevel      string         `json:"isolationLevel"`
				IsBlindAppend       *bool          `json:"isBlindAppend"`
				UserMetadata        string         `json:"userMetadata"`
			}
			if err := unmarshalStrict(info.Raw, &f); err != nil {
				return nil, fmt.Errorf("%w: %s of %s: commitInfo: %v", ErrCorrupt, c.Key, store.Location(), err)
			}
			e.Operation, e.EngineInfo, e.ReadVersion, e.IsolationLevel, e.IsBlindAppend, e.UserMetadata =
				info.Operation, f.EngineInfo, f.ReadVersion, f.IsolationLevel, f.IsBlindAppend, f.UserMetadata
			if len(f.OperationParameters) > 0 && string(f.OperationParameters) != "null" {
				e.OperationParameters = json.RawMessage(f.OperationParameters)
			}
			if len(f.OperationMetrics) > 0 && string(f.OperationMetrics) != "null" {
				e.OperationMetrics = json.RawMessage(f.OperationMetrics)
			}
			if i == 0 {
				ict = info.InCommitTimestamp != nil
			}
			if ict && info.InCommitTimestamp != nil {
				e.Timestamp = time.UnixMilli(*info.InCommitTimestamp).UTC()
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Detail is DESCRIBE DETAIL.
type Detail struct {
	Format           string            `json:"format"`
	ID               string            `json:"id"`
	Name             *string           `json:"name"`
	Description      *string           `json:"description"`
	Location         string            `json:"location"`
	CreatedAt        *time.Time        `json:"createdAt"`
	LastModified     time.Time         `json:"lastModified"`
	Version          int64             `json:"version"`
	PartitionColumns []string          `json:"partitionColumns"`
	NumFiles         int64             `json:"numFiles"`
	SizeInBytes      int64             `json:"sizeInBytes"`
	Properties       map[string]string `json:"properties"`
	MinReaderVersion int               `json:"minReaderVersion"`
	MinWriterVersion int               `json:"minWriterVersion"`
	TableFeatures    []string          `json:"tableFeatures"`
}

// Detail computes DESCRIBE DETAIL: it streams the live files to count them and their bytes.
func (s *Snapshot) Detail(ctx context.Context, store storage.Store) (*Detail, error) {
	d := &Detail{
		Format: "delta", ID: s.Metadata.ID, Name: s.Metadata.Name, Description: s.Metadata.Description,
		Location: s.Location, Version: s.Version, PartitionColumns: s.Metadata.PartitionColumns,
		Properties: s.Metadata.Configuration, MinReaderVersion: s.Protocol.MinReaderVersion,
		MinWriterVersion: s.Protocol.MinWriterVersion,
	}
	if d.PartitionColumns == nil {
		d.PartitionColumns = []string{}
	}
	if d.Properties == nil {
		d.Properties = map[string]string{}
	}
	if s.Metadata.CreatedTime != nil {
		t := time.UnixMilli(*s.Metadata.CreatedTime).UTC()
		d.CreatedAt = &t
	}
	features := map[string]bool{}
	for _, f := range append(append([]string{}, s.Protocol.ReaderFeatures...), s.Protocol.WriterFeatures...) {
		features[f] = true
	}
	for f := range features {
		d.TableFeatures = append(d.TableFeatures, f)
	}
	sort.Strings(d.TableFeatures)
	if d.TableFeatures == nil {
		d.TableFeatures = []string{}
	}
	for _, c := range s.Segment.AllCommits {
		if c.Version == s.Version {
			d.LastModified = c.ModTime.UTC()
		}
	}
	err := s.Files(ctx, store, func(f File) error {
		if !f.Removed {
			d.NumFiles++
			d.SizeInBytes += f.Size
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}
