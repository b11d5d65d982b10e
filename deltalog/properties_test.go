package deltalog

import (
	"errors"
	"strings"
	"testing"
)

// TestValidatePropertyKeys: ALTER TABLE … SET TBLPROPERTIES stores a delta.* key in Spark's
// spelling whatever its case, and refuses one that Spark does not know, that deltavacuum does
// not set, or that only looks like a Delta key (which nothing would ever read).
func TestValidatePropertyKeys(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"delta.deletedFileRetentionDuration", "delta.deletedFileRetentionDuration"},
		{"DELTA.deletedFileRetentionDuration", "delta.deletedFileRetentionDuration"},
		{"delta.deletedfileretentionduration", "delta.deletedFileRetentionDuration"},
		{"Delta.DeletedFileRetentionDuration", "delta.deletedFileRetentionDuration"},
		{"DELTA.LOGRETENTIONDURATION", "delta.logRetentionDuration"},
		{"delta.CHECKPOINTINTERVAL", "delta.checkpointInterval"},
		{"delta.autooptimize.autocompact", "delta.autoOptimize.autoCompact"},
		// Spark stores delta.universalFormat.config.* lower-cased.
		{"delta.universalFormat.config.iceberg.Write.Format", "delta.universalformat.config.iceberg.write.format"},
		// Other keys as typed, case and all.
		{"my.key", "my.key"},
		{"Owner", "Owner"},
		{"spark.sql.parquet.compression.codec", "spark.sql.parquet.compression.codec"},
		{"comment", "comment"},
		{"deltas", "deltas"},
		{"my.retention", "my.retention"},
	} {
		value := "v"
		if deltaPropertyByLower[strings.ToLower(tt.want)] != nil {
			value = validValue(t, tt.want)
		}
		got, err := ValidateProperty(tt.key, value)
		if err != nil || got != tt.want {
			t.Errorf("ValidateProperty(%q) = %q, %v; want %q", tt.key, got, err, tt.want)
		}
	}

	for _, tt := range []struct{ key, mention string }{
		{"", "empty"},
		// Unknown delta.* keys, with the nearest known key.
		{"delta.deletedFileRetentionDurations", "did you mean delta.deletedFileRetentionDuration?"},
		{"delta.deletedFileRetention", "DELTA_UNKNOWN_CONFIGURATION"},
		{"delta.logRetentionDurration", "did you mean delta.logRetentionDuration?"},
		{"delta.deletedFileRetentionDuration ", "did you mean delta.deletedFileRetentionDuration?"},     // trailing space
		{"delta. deletedFileRetentionDuration", "did you mean delta.deletedFileRetentionDuration?"},     // inner space
		{"delta.deletedFileRetentionDurati\u043en", "did you mean delta.deletedFileRetentionDuration?"}, // Cyrillic o
		{"delta.checkpo\u0130ntInterval", "did you mean delta.checkpointInterval?"},                     // 'İ': Java lower-cases it to "i̇"
		{"delta.chec\u212apointInterval", "did you mean delta.checkpointInterval?"},                     // Kelvin sign
		{"delta.targetFileSize", "DELTA_UNKNOWN_CONFIGURATION"},                                         // a vendor's key, not Delta Lake's
		{"delta.parquet.vorder.enabled", "DELTA_UNKNOWN_CONFIGURATION"},
		{"delta.", "DELTA_UNKNOWN_CONFIGURATION"},
		// Keys that look like Delta keys but are not delta.*: Spark would store them as typed.
		{" delta.deletedFileRetentionDuration", "looks like delta.deletedFileRetentionDuration"},
		{"d\u0435lta.deletedFileRetentionDuration", "looks like delta.deletedFileRetentionDuration"}, // Cyrillic e
		{"detla.deletedFileRetentionDuration", "looks like delta.deletedFileRetentionDuration"},
		{"delta_deletedFileRetentionDuration", "looks like delta.deletedFileRetentionDuration"},
		{"deletedFileRetentionDuration", "looks like delta.deletedFileRetentionDuration"},
		{"checkpointinterval", "looks like delta.checkpointInterval"},
		// Protocol changes and keys Spark manages.
		{"delta.feature.deletionVectors", "protocol"},
		{"DELTA.FEATURE.appendOnly", "protocol"},
		{"delta.constraints.positive", "CHECK constraint"},
		{"delta.appendOnly", "protocol"},
		{"DELTA.ENABLEDELETIONVECTORS", "protocol"},
		{"delta.minReaderVersion", "protocol"},
		{"delta.enableChangeDataCapture", "protocol"},
		{"delta.ignoreProtocolDefaults", "protocol"},
		{"delta.columnMapping.maxColumnId", "cannot be set"},
		{"delta.coordinatedCommits.commitCoordinator-preview", "managed by Spark"},
		{"delta.inCommitTimestampEnablementVersion", "managed by Spark"},
		{"delta.universalFormat.config.\u0130", "ASCII"},
	} {
		got, err := ValidateProperty(tt.key, "true")
		if !errors.Is(err, ErrInvalidProperty) || !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("ValidateProperty(%q) = %q, %v; want an ErrInvalidProperty mentioning %q", tt.key, got, err, tt.mention)
		}
	}
}

// validValue is a value ValidateProperty accepts for the known key.
func validValue(t *testing.T, key string) string {
	t.Helper()
	p := deltaPropertyByLower[strings.ToLower(key)]
	if p == nil {
		t.Fatalf("%s is not in deltaProperties", key)
	}
	switch p.typ {
	case typeInterval:
		return "interval 2 days"
	case typeBool:
		return "true"
	case typeInt:
		return "10"
	case typeChoice:
		return p.choices[0]
	}
	return ""
}

// TestValidatePropertyValues: the value of a known Delta key is one Spark's DeltaConfigs parses
// and accepts (its fromString and validationFunction), so that no engine fails on the table.
func TestValidatePropertyValues(t *testing.T) {
	type cases struct {
		key       string
		good, bad []string
	}
	intervals := cases{
		good: []string{"interval 7 days", "1 week", " interval 2 days ", "INTERVAL 36 HOURS", "+5 days", "interval 1.5 seconds", "interval 0 days"},
		bad: []string{"", " ", "interval 1.5 days", "interval 36.5 hours", "interval 1. hour", "interval 1 month", "-1 days",
			"1e3 days", "interval 2234567890 days", "interval 106751992 days", "forever", "7", "interval ７ days", "interval 7\u00a0days"},
	}
	bools := cases{
		good: []string{"true", "false", "TRUE", "False", "tRuE"},
		bad:  []string{"", "yes", "1", "0", " true", "true ", "t", "truee", "fal\u017fe" /* Java's equalsIgnoreCase would take it */},
	}
	for _, tc := range []cases{
		{key: "delta.checkpointInterval", good: []string{"1", "10", "+10", "2147483647"},
			bad: []string{"0", "-1", "ten", "", " 10", "10 ", "1e3", "10.0", "2147483648", "99999999999", "\uff11\uff10", "0x10", "1_0", "+", "-", "+-1"}},
		{key: "delta.randomPrefixLength", good: []string{"1", "2"}, bad: []string{"0", "-5", "two"}},
		{key: "delta.dataSkippingNumIndexedCols", good: []string{"-1", "0", "32"}, bad: []string{"-2", "-2147483649", "all"}},
		{key: "delta.dataSkippingStringPrefixLength", good: []string{"0", "32"}, bad: []string{"-1", ""}},
		{key: "delta.isolationLevel", good: []string{"Serializable", "serializable", "SERIALIZABLE"},
			bad: []string{"WriteSerializable", "SnapshotIsolation", "", " Serializable"}},
		{key: "delta.autoOptimize.autoCompact", good: []string{"true", "false", "TRUE"}, bad: []string{"auto", "legacy", "1", ""}},
		{key: "delta.enableExpiredLogCleanup", good: bools.good, bad: bools.bad},
		{key: "delta.checkpoint.writeStatsAsStruct", good: bools.good, bad: bools.bad},
		{key: "DELTA.AUTOOPTIMIZE", good: bools.good, bad: bools.bad},
		{key: PropDeletedFileRetention, good: intervals.good, bad: intervals.bad},
		{key: PropLogRetention, good: intervals.good, bad: intervals.bad},
		{key: PropCheckpointRetention, good: intervals.good, bad: intervals.bad},
		{key: "delta.sampleRetentionDuration", good: intervals.good, bad: intervals.bad},
		{key: "delta.setTransactionRetentionDuration", good: intervals.good, bad: intervals.bad},
		{key: "delta.dropFeatureTruncateHistory.retentionDuration", good: intervals.good, bad: intervals.bad},
		{key: "Delta.DeletedFileRetentionDuration", good: intervals.good, bad: intervals.bad},
		// Other keys take any value.
		{key: "my.key", good: []string{"", "anything", "interval 1.5 days", "0"}},
	} {
		for _, v := range tc.good {
			if _, err := ValidateProperty(tc.key, v); err != nil {
				t.Errorf("%s = %q: %v", tc.key, v, err)
			}
		}
		for _, v := range tc.bad {
			if _, err := ValidateProperty(tc.key, v); !errors.Is(err, ErrInvalidProperty) {
				t.Errorf("%s = %q: got %v, want ErrInvalidProperty", tc.key, v, err)
			} else if canonical := deltaPropertyByLower[strings.ToLower(tc.key)].key; !strings.Contains(err.Error(), canonical) {
				t.Errorf("%s = %q: the error %q does not name the key", tc.key, v, err)
			}
		}
	}
}

// TestUnsetPropertyKey: UNSET removes the canonical spelling of a Delta key, keeps any other key
// as typed (a misspelt key another writer stored can be removed), and refuses what SET refuses
// for protocol reasons.
func TestUnsetPropertyKey(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"DELTA.deletedFileRetentionDuration", "delta.deletedFileRetentionDuration"},
		{"delta.deletedFileRetentionDurations", "delta.deletedFileRetentionDurations"},
		{"d\u0435lta.deletedFileRetentionDuration", "d\u0435lta.deletedFileRetentionDuration"},
		{"my.Key", "my.Key"},
	} {
		if got, err := UnsetPropertyKey(tt.key); err != nil || got != tt.want {
			t.Errorf("UnsetPropertyKey(%q) = %q, %v; want %q", tt.key, got, err, tt.want)
		}
	}
	for _, key := range []string{"", "delta.appendOnly", "delta.feature.x", "delta.constraints.c", "delta.columnMapping.maxColumnId"} {
		if _, err := UnsetPropertyKey(key); !errors.Is(err, ErrInvalidProperty) {
			t.Errorf("UnsetPropertyKey(%q): got %v, want ErrInvalidProperty", key, err)
		}
	}
}

// TestDeltaPropertiesTable: the table of Spark's keys is consistent: canonical delta.* keys,
// unique ignoring case, a value type for every key deltavacuum sets, and every key an earlier
// deltavacuum refused as a protocol change still refused.
func TestDeltaPropertiesTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range deltaProperties {
		lk := strings.ToLower(p.key)
		if !strings.HasPrefix(p.key, "delta.") || seen[lk] || !isASCII(p.key) {
			t.Errorf("%q: not a canonical delta.* key, or given twice", p.key)
		}
		seen[lk] = true
		if p.refused == "" && p.typ == typeOther {
			t.Errorf("%s is set without validating its value", p.key)
		}
		if (p.typ == typeChoice) != (len(p.choices) > 0) {
			t.Errorf("%s: choices only for typeChoice", p.key)
		}
	}
	for _, key := range []string{
		"delta.minReaderVersion", "delta.minWriterVersion", "delta.enableDeletionVectors",
		"delta.enableChangeDataFeed", "delta.columnMapping.mode", "delta.enableInCommitTimestamps",
		"delta.enableRowTracking", "delta.universalFormat.enabledFormats", "delta.checkpointPolicy",
		"delta.enableTypeWidening", "delta.appendOnly", "delta.enableIcebergCompatV1",
		"delta.enableIcebergCompatV2", "delta.enableVariantShredding",
	} {
		if p := deltaPropertyByLower[strings.ToLower(key)]; p == nil || p.refused != refusedProtocol {
			t.Errorf("%s is no longer refused as a protocol change", key)
		}
	}
	// Every key the reader uses is one Spark knows and deltavacuum sets.
	for _, key := range []string{PropDeletedFileRetention, PropLogRetention, PropCheckpointRetention} {
		if p := deltaPropertyByLower[strings.ToLower(key)]; p == nil || p.typ != typeInterval || p.refused != "" {
			t.Errorf("%s: not an interval property deltavacuum sets", key)
		}
	}
}
