package deltalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/deltavacuum/deltavacuum/internal/nearest"
	"github.com/deltavacuum/deltavacuum/storage"
)

// ErrInvalidProperty is returned (wrapped) for a table property this program refuses to set.
var ErrInvalidProperty = errors.New("invalid table property")

// A property's value, as Spark's DeltaConfigs parses and validates it (fromString, then
// validationFunction).
type propertyType int

const (
	// typeOther: not parsed here (only refused keys have it).
	typeOther propertyType = iota
	// typeInterval: parseCalendarInterval, then isValidIntervalConfigValue (see ValidateInterval).
	typeInterval
	// typeBool: Scala's toBoolean, "true" or "false" in any case, nothing around them.
	typeBool
	// typeInt: Scala's toInt (a 32-bit int, optional sign, no spaces) at least min.
	typeInt
	// typeChoice: one of choices, in any case.
	typeChoice
)

// deltaProperty is a key of Delta Spark's DeltaConfigs (DeltaConfig.scala) and how deltavacuum
// treats it.
type deltaProperty struct {
	key     string // the canonical spelling Spark stores
	typ     propertyType
	min     int64    // typeInt
	choices []string // typeChoice
	// refused is why deltavacuum does not set or unset the key ("" when it does).
	refused string
}

// Why a key is refused.
const (
	refusedProtocol = "changes what the table's protocol must support, which deltavacuum does not do; set it with Spark"
	refusedSpark    = "is managed by Spark (it is written together with other changes deltavacuum does not make, or its value is not validated here); set it with Spark"
)

// deltaProperties is every key of Delta Spark's DeltaConfigs (delta-io/delta master at
// bb1057f4, 2026: spark/src/main/scala/org/apache/spark/sql/delta/DeltaConfig.scala, each
// buildConfig), with its value type and Spark's validation: the keys a user may set, and the
// few Spark refuses or maintains itself, so that they are recognised and refused by name. Spark matches a delta.* key against
// these case-insensitively and stores this spelling (validateConfiguration); an unknown delta.*
// key is refused there ([DELTA_UNKNOWN_CONFIGURATION]) and here. Readers, Spark's and
// deltavacuum's, look keys up exactly (configuration.get(key)): a key stored in another case is
// never read, which is why ALTER TABLE stores the canonical spelling. Keys are refused (refused
// != "") when setting them is more than writing the configuration: a protocol change (table
// features, protocol versions), state Spark keeps consistent with other actions (coordinated
// commits, redirects, in-commit timestamp enablement, row tracking), or a value syntax this
// program does not reproduce exactly (a column list, a semantic version). Refusing is always
// safe: Spark sets them.
var deltaProperties = []deltaProperty{
	// Retention and log maintenance (the properties deltavacuum's ALTER TABLE is for).
	{key: PropDeletedFileRetention, typ: typeInterval},                             // 'interval 1 week'
	{key: PropLogRetention, typ: typeInterval},                                     // 'interval 30 days'
	{key: PropCheckpointRetention, typ: typeInterval},                              // 'interval 2 days'
	{key: "delta.sampleRetentionDuration", typ: typeInterval},                      // 'interval 7 days'
	{key: "delta.setTransactionRetentionDuration", typ: typeInterval},              // unset
	{key: "delta.dropFeatureTruncateHistory.retentionDuration", typ: typeInterval}, // 'interval 24 hours'
	{key: "delta.checkpointInterval", typ: typeInt, min: 1},                        // every commit computes version % it
	{key: "delta.enableExpiredLogCleanup", typ: typeBool},
	{key: "delta.enableFullRetentionRollback", typ: typeBool},
	{key: "delta.checkpoint.writeStatsAsJson", typ: typeBool},
	{key: "delta.checkpoint.writeStatsAsStruct", typ: typeBool},

	// Writers' options: no protocol change, values validated as Spark does.
	{key: "delta.randomizeFilePrefixes", typ: typeBool},
	{key: "delta.randomPrefixLength", typ: typeInt, min: 1},
	{key: "delta.dataSkippingNumIndexedCols", typ: typeInt, min: -1},
	{key: "delta.dataSkippingStringPrefixLength", typ: typeInt, min: 0},
	{key: "delta.autoOptimize", typ: typeBool},
	{key: "delta.autoOptimize.optimizeWrite", typ: typeBool},
	{key: "delta.autoOptimize.autoCompact", typ: typeChoice, choices: []string{"true", "false"}}, // AutoCompactType.ALLOWED_VALUES, lower-cased
	{key: "delta.isolationLevel", typ: typeChoice, choices: []string{"Serializable"}},            // IsolationLevel.fromString, then == Serializable
	{key: "delta.writePartitionColumnsToParquet", typ: typeBool},
	{key: "delta.castIcebergTimeType", typ: typeBool},
	{key: "delta.ignoreIcebergBucketPartition", typ: typeBool},

	// Protocol: the property asks for a table feature or protocol version.
	{key: "delta.minReaderVersion", typ: typeInt, refused: refusedProtocol},
	{key: "delta.minWriterVersion", typ: typeInt, refused: refusedProtocol},
	{key: "delta.ignoreProtocolDefaults", typ: typeBool, refused: refusedProtocol}, // Spark drops it from the metaData
	{key: "delta.appendOnly", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableDeletionVectors", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableChangeDataFeed", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableChangeDataCapture", typ: typeBool, refused: refusedProtocol}, // the old name of enableChangeDataFeed
	{key: "delta.columnMapping.mode", refused: refusedProtocol},
	{key: "delta.enableInCommitTimestamps", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableRowTracking", typ: typeBool, refused: refusedProtocol},
	{key: "delta.universalFormat.enabledFormats", refused: refusedProtocol},
	{key: "delta.checkpointPolicy", refused: refusedProtocol},
	{key: "delta.enableTypeWidening", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableIcebergCompatV1", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableIcebergCompatV2", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableIcebergCompatV3", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableVariantShredding", typ: typeBool, refused: refusedProtocol},
	{key: "delta.enableMaterializePartitionColumnsFeature", typ: typeBool, refused: refusedProtocol},

	// Managed by Spark, or a value syntax not reproduced here.
	{key: "delta.columnMapping.maxColumnId", refused: "is maintained by Spark and cannot be set (DELTA_CANNOT_MODIFY_TABLE_PROPERTY)"},
	{key: "delta.coordinatedCommits.commitCoordinator-preview", refused: refusedSpark},
	{key: "delta.coordinatedCommits.commitCoordinatorConf-preview", refused: refusedSpark},
	{key: "delta.coordinatedCommits.tableConf-preview", refused: refusedSpark},
	{key: "delta.redirectReaderWriter-preview", refused: refusedSpark},
	{key: "delta.redirectWriterOnly-preview", refused: refusedSpark},
	{key: "delta.inCommitTimestampEnablementVersion", refused: refusedSpark},
	{key: "delta.inCommitTimestampEnablementTimestamp", refused: refusedSpark},
	{key: "delta.requireCheckpointProtectionBeforeVersion", refused: refusedSpark},
	{key: "delta.rowTrackingSuspended", refused: refusedSpark},
	{key: "delta.universalFormat.iceberg.atomicConversion.supported", refused: refusedSpark},
	{key: "delta.compatibility.symlinkFormatManifest.enabled", refused: refusedSpark}, // Spark writes the manifests on commit
	{key: "delta.dataSkippingStatsColumns", refused: refusedSpark},                    // Spark's SQL column-list syntax
	{key: "delta.parquet.format.version", refused: refusedSpark},                      // a semantic version Spark resolves
}

// deltaPropertyByLower indexes deltaProperties by the lower-case key.
var deltaPropertyByLower = func() map[string]*deltaProperty {
	m := make(map[string]*deltaProperty, len(deltaProperties))
	for i := range deltaProperties {
		m[asciiLower(deltaProperties[i].key)] = &deltaProperties[i]
	}
	return m
}()

// Key prefixes Spark's validateConfiguration treats apart (compared lower-case).
const (
	prefixDelta       = "delta."
	prefixFeature     = "delta.feature."
	prefixConstraints = "delta.constraints."
	prefixUniForm     = "delta.universalformat.config."
)

// propertyKey returns the key under which a table property is stored, as Spark's
// validateConfiguration (set) and normalizeConfigKeys (unset) name it, and its entry in
// deltaProperties (nil for other keys), or an error for a key deltavacuum does not write:
//
//   - a delta.* key is matched against Spark's keys (deltaProperties) ignoring ASCII case, and
//     stored in Spark's spelling; a key refused there (protocol, managed by Spark) is refused;
//   - an unknown delta.* key is refused by SET, naming the nearest known key
//     ([DELTA_UNKNOWN_CONFIGURATION]), and kept as typed by UNSET, so that a misspelt key
//     another writer stored can be removed (Spark's normalizeConfigKeys);
//   - delta.feature.* (a protocol change) and delta.constraints.* (a CHECK constraint) are
//     refused; delta.universalFormat.config.* is lower-cased, as Spark's SET stores it;
//   - any other key is kept exactly as typed. SET refuses one within two edits of a Delta key
//     (a lookalike character, a space, a typo in "delta.", the prefix left out): Spark stores
//     such a key and nothing ever reads it, so the property the user meant silently stays
//     unset.
//
// Non-ASCII characters never match: Spark lower-cases with Java's full Unicode mapping, under
// which 'İ' is not 'i', and storing a key Spark would refuse is worse than refusing one Spark
// would take (the Kelvin sign).
func propertyKey(key string, set bool) (string, *deltaProperty, error) {
	if key == "" {
		return "", nil, fmt.Errorf("%w: empty key", ErrInvalidProperty)
	}
	lk := asciiLower(key)
	if !strings.HasPrefix(lk, prefixDelta) {
		if near, d := nearestDeltaKey(lk); set && d <= 2 {
			return "", nil, fmt.Errorf("%w: %q is not a Delta table property but looks like %s; write that key exactly (Spark would store %q as typed and nothing would read it)", ErrInvalidProperty, key, near, key)
		}
		return key, nil, nil
	}
	switch {
	case strings.HasPrefix(lk, prefixFeature):
		return "", nil, fmt.Errorf("%w: %s changes the table protocol, which deltavacuum does not do; use Spark to enable table features", ErrInvalidProperty, key)
	case strings.HasPrefix(lk, prefixConstraints):
		return "", nil, fmt.Errorf("%w: %s is a CHECK constraint, which needs the checkConstraints table feature and a check of every row; use ALTER TABLE … ADD/DROP CONSTRAINT in Spark", ErrInvalidProperty, key)
	case strings.HasPrefix(lk, prefixUniForm):
		if !isASCII(key) {
			return "", nil, fmt.Errorf("%w: %q: a delta.* key must be ASCII", ErrInvalidProperty, key)
		}
		return lk, nil, nil
	}
	p, ok := deltaPropertyByLower[lk]
	if !ok {
		if !set {
			return key, nil, nil
		}
		msg := fmt.Sprintf("%q is not a Delta table property ([DELTA_UNKNOWN_CONFIGURATION]; deltavacuum knows the keys of Delta Lake's DeltaConfigs, set a vendor's own delta.* keys with the vendor's Spark)", key)
		if near, d := nearestDeltaKey(lk); d <= len(lk)/3 {
			msg += "; did you mean " + near + "?"
		}
		return "", nil, fmt.Errorf("%w: %s", ErrInvalidProperty, msg)
	}
	if p.refused != "" {
		return "", nil, fmt.Errorf("%w: %s %s", ErrInvalidProperty, p.key, p.refused)
	}
	return p.key, p, nil
}

// UnsetPropertyKey returns the key ALTER TABLE … UNSET TBLPROPERTIES removes for key: the
// canonical spelling of a Delta key, anything else as typed (see propertyKey).
func UnsetPropertyKey(key string) (string, error) {
	k, _, err := propertyKey(key, false)
	return k, err
}

// ValidateProperty checks a table property as ALTER TABLE … SET TBLPROPERTIES writes it and
// returns the key to store (see propertyKey). The value of a known Delta key must be one
// Spark's DeltaConfigs parses and accepts, so that no engine reading the table fails on it (Spark
// parses the retention properties on every snapshot it builds): intervals as ValidateInterval,
// booleans "true" or "false" in any case, ints within Spark's bounds. Values are checked more
// strictly than Spark where Spark's Java parsing is lenient in ways other engines are not (only
// ASCII digits and letters). Other keys take any value.
func ValidateProperty(key, value string) (string, error) {
	canonical, p, err := propertyKey(key, true)
	if err != nil {
		return "", err
	}
	if p == nil {
		return canonical, nil
	}
	invalid := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("%w: %s = %q: "+format, append([]any{ErrInvalidProperty, p.key, value}, args...)...)
	}
	switch p.typ {
	case typeInterval:
		if err := ValidateInterval(value); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrInvalidProperty, p.key, err)
		}
	case typeBool:
		if !strings.EqualFold(value, "true") && !strings.EqualFold(value, "false") || !isASCII(value) {
			return invalid("needs to be a boolean, true or false")
		}
	case typeInt:
		n, ok := parseJavaInt(value)
		if !ok {
			return invalid("needs to be an integer (32 bits, digits only)")
		}
		if n < p.min {
			if p.min == 1 {
				return invalid("needs to be a positive integer")
			}
			return invalid("needs to be at least %d", p.min)
		}
	case typeChoice:
		for _, c := range p.choices {
			if strings.EqualFold(value, c) && isASCII(value) {
				return canonical, nil
			}
		}
		return invalid("needs to be one of %s", strings.Join(p.choices, ", "))
	}
	return canonical, nil
}

// parseJavaInt parses s as Java's Integer.parseInt does (an optional sign, then digits, within
// 32 bits), ASCII digits only.
func parseJavaInt(s string) (int64, bool) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	if len(s)-len(digits) > 1 || digits == "" || len(digits) > 10 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(digits[i]-'0')
	}
	if s[0] == '-' {
		n = -n
	}
	return n, n == int64(int32(n))
}

// nearestDeltaKey returns the known key (with or without its "delta." prefix) nearest to the
// lower-case key lk, and its distance in edits (of runes).
func nearestDeltaKey(lk string) (string, int) {
	best, bestD := "", math.MaxInt
	for _, p := range deltaProperties {
		l := asciiLower(p.key)
		for _, cand := range []string{l, strings.TrimPrefix(l, prefixDelta)} {
			if d := nearest.Distance(lk, cand); d < bestD {
				best, bestD = p.key, d
			}
		}
	}
	return best, bestD
}

// Property is one key and value, in the order given.
type Property struct {
	Key, Value string
}

// SetProperties commits a metaData action whose configuration has props set, every other field
// of the metaData action (including fields this program does not know) kept as it was. Every
// property is checked by ValidateProperty and stored under its canonical key; a
// deletedFileRetentionDuration longer than the logRetentionDuration is refused. It returns the
// version written.
func SetProperties(ctx context.Context, store storage.Store, props []Property, opts CommitOptions) (int64, error) {
	canonical := make([]Property, len(props))
	given := map[string]string{}
	for i, p := range props {
		key, err := ValidateProperty(p.Key, p.Value)
		if err != nil {
			return -1, fmt.Errorf("table %s: %w", store.Location(), err)
		}
		if first, ok := given[key]; ok {
			return -1, fmt.Errorf("table %s: %w: %s given twice (as %q and %q)", store.Location(), ErrInvalidProperty, key, first, p.Key)
		}
		given[key] = p.Key
		canonical[i] = Property{Key: key, Value: p.Value}
	}
	params := map[string]string{}
	for _, p := range canonical {
		params[p.Key] = p.Value
	}
	return Commit(ctx, store, func(snap *Snapshot) (*CommitRequest, error) {
		conf := cloneConf(snap.Metadata.Configuration)
		for _, p := range canonical {
			conf[p.Key] = p.Value
		}
		return metadataCommit(snap, conf, "SET TBLPROPERTIES", map[string]any{"properties": params})
	}, opts)
}

// UnsetProperties commits a metaData action without the given keys. A key that is not set is
// an error unless ifExists.
func UnsetProperties(ctx context.Context, store storage.Store, keys []string, ifExists bool, opts CommitOptions) (int64, error) {
	canonical := make([]string, len(keys))
	for i, k := range keys {
		key, err := UnsetPropertyKey(k)
		if err != nil {
			return -1, fmt.Errorf("table %s: %w", store.Location(), err)
		}
		canonical[i] = key
	}
	keys = canonical
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
