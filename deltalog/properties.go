package deltalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/deltavacuum/deltavacuum/storage"
)

// ErrInvalidProperty is returned (wrapped) for a table property this program refuses to set.
var ErrInvalidProperty = errors.New("invalid table property")

// protocolProperties change what the table's protocol must support; setting them without the
// matching protocol change (which this program does not make) would break the table.
var protocolProperties = []string{
	"delta.minReaderVersion", "delta.minWriterVersion", "delta.enableDeletionVectors",
	"delta.enableChangeDataFeed", "delta.columnMapping.mode", "delta.enableInCommitTimestamps",
	"delta.enableRowTracking", "delta.universalFormat.enabledFormats", "delta.checkpointPolicy",
	"delta.enableTypeWidening", "delta.appendOnly", "delta.enableIcebergCompatV1",
	"delta.enableIcebergCompatV2", "delta.enableVariantShredding",
}

var intervalProperties = map[string]bool{
	PropDeletedFileRetention: true,
	PropLogRetention:         true,
	PropCheckpointRetention:  true,
}

func checkPropertyKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidProperty)
	}
	lk := strings.ToLower(key)
	if strings.HasPrefix(lk, "delta.feature.") {
		return fmt.Errorf("%w: %s changes the table protocol, which deltavacuum does not do; use Spark to enable table features", ErrInvalidProperty, key)
	}
	for _, p := range protocolProperties {
		if strings.EqualFold(p, key) {
			return fmt.Errorf("%w: %s changes what the table's protocol must support, which deltavacuum does not do; set it with Spark", ErrInvalidProperty, key)
		}
	}
	return nil
}

// Property is one key and value, in the order given.
type Property struct {
	Key, Value string
}

// SetProperties commits a metaData action whose configuration has props set, every other field
// of the metaData action (including fields this program does not know) kept as it was. It
// validates interval properties and refuses a deletedFileRetentionDuration longer than the
// logRetentionDuration. It returns the version written.
func SetProperties(ctx context.Context, store storage.Store, props []Property, opts CommitOptions) (int64, error) {
	seen := map[string]bool{}
	for _, p := range props {
		if err := checkPropertyKey(p.Key); err != nil {
			return -1, err
		}
		if seen[p.Key] {
			return -1, fmt.Errorf("%w: %s given twice", ErrInvalidProperty, p.Key)
		}
		seen[p.Key] = true
		if intervalProperties[p.Key] {
			if _, err := ParseInterval(p.Value); err != nil {
				return -1, fmt.Errorf("%w: %s: %v", ErrInvalidProperty, p.Key, err)
			}
		}
	}
	params := map[string]string{}
	for _, p := range props {
		params[p.Key] = p.Value
	}
	return Commit(ctx, store, func(snap *Snapshot) (*CommitRequest, error) {
		conf := cloneConf(snap.Metadata.Configuration)
		for _, p := range props {
			conf[p.Key] = p.Value
		}
		return metadataCommit(snap, conf, "SET TBLPROPERTIES", map[string]any{"properties": params})
	}, opts)
}

// UnsetProperties commits a metaData action without the given keys. A key that is not set is
// an error unless ifExists.
func UnsetProperties(ctx context.Context, store storage.Store, keys []string, ifExists bool, opts CommitOptions) (int64, error) {
	for _, k := range keys {
		if err := checkPropertyKey(k); err != nil {
			return -1, err
		}
	}
	return Commit(ctx, store, func(snap *Snapshot) (*CommitRequest, error) {
		conf := cloneConf(snap.Metadata.Configuration)
		for _, k := range keys {
			if _, ok := conf[k]; !ok && !ifExists {
				return nil, fmt.Errorf("%w: table %s has no property %s (use UNSET TBLPROPERTIES IF EXISTS to ignore missing keys)", ErrInvalidProperty, snap.Location, k)
			}
			delete(conf, k)
		}
		return metadataCommit(snap, conf, "UNSET TBLPROPERTIES", map[string]any{"properties": keys, "ifExists": ifExists})
	}, opts)
}

func cloneConf(c map[string]string) map[string]string {
	out := make(map[string]string, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
}

// metadataCommit checks the new configuration and builds the commit that writes it.
func metadataCommit(snap *Snapshot, conf map[string]string, op string, params map[string]any) (*CommitRequest, error) {
	next := *snap
	next.Metadata.Configuration = conf
	deleted, err := next.DeletedFileRetention()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidProperty, err)
	}
	logRet, err := next.LogRetention()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidProperty, err)
	}
	if _, err := next.intervalProperty(PropCheckpointRetention, DefaultCheckpointRetention); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidProperty, err)
	}
	if deleted > logRet {
		return nil, fmt.Errorf("%w: table %s: %s (%v) must not be longer than %s (%v): the log would forget tombstones before their files may be deleted; lengthen %s first",
			ErrInvalidProperty, snap.Location, PropDeletedFileRetention, deleted, PropLogRetention, logRet, PropLogRetention)
	}
	raw, err := withConfiguration(snap.Metadata.Raw, conf)
	if err != nil {
		return nil, err
	}
	for k, v := range params {
		if m, ok := v.(map[string]string); ok {
			b, _ := json.Marshal(m)
			params[k] = string(b)
		}
		if l, ok := v.([]string); ok {
			b, _ := json.Marshal(l)
			params[k] = string(b)
		}
	}
	return &CommitRequest{Operation: op, Parameters: params, Actions: []any{map[string]json.RawMessage{"metaData": raw}}}, nil
}

// withConfiguration replaces the configuration of a raw metaData action, keeping every other
// field as it was.
func withConfiguration(raw json.RawMessage, conf map[string]string) (json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("%w: metaData: %v", ErrCorrupt, err)
	}
	b, err := json.Marshal(conf)
	if err != nil {
		return nil, err
	}
	fields["configuration"] = b
	return json.Marshal(fields)
}
