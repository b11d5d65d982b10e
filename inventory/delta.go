package inventory

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/sql"
	"github.com/deltavacuum/deltavacuum/storage"
)

// deltaTable is a Delta table used as an inventory: the rows of its live data files.
type deltaTable struct {
	name     string
	store    storage.Store
	snap     *deltalog.Snapshot
	cols     []column
	physical []string // the columns' names in the data files
	parts    []bool   // partition columns, whose values are not in the data files
}

// deltaRefusedReaderFeatures are the reader features deltalog supports that an inventory table
// may not have, each with the reason. Every other reader feature deltalog supports is accepted
// (deltaReaderFeatureOK), so that the two lists cannot drift apart.
var deltaRefusedReaderFeatures = map[string]string{
	// Refused with its own message in openDelta.
	"deletionVectors": "deleted rows are hidden by deletion vectors, which this program does not read",
	// Types and encodings the inventory reader has not been checked against.
	"collations-preview": "collated strings may compare differently in the inventory query",
	"geospatial":         "the inventory reader has not been checked against geospatial columns",
	"geospatial-dev":     "the inventory reader has not been checked against geospatial columns",
	"variantShredding":   "the inventory reader has not been checked against shredded variants",
}

// deltaReaderFeatureOK reports whether an inventory table may have the reader feature name:
// deltalog supports it and it does not change which rows a reader sees.
func deltaReaderFeatureOK(name string) bool {
	if _, refused := deltaRefusedReaderFeatures[name]; refused {
		return false
	}
	for _, f := range deltalog.Features {
		if f.Name == name {
			return f.Reader && f.Supported
		}
	}
	return false
}

func openDelta(ctx context.Context, name string, store storage.Store) (*deltaTable, error) {
	snap, err := deltalog.Load(ctx, store)
	if err != nil {
		return nil, fmt.Errorf("inventory %s: %w", name, err)
	}
	for _, f := range snap.Protocol.ReaderFeatures {
		if f == "deletionVectors" {
			return nil, fmt.Errorf("inventory %s: the inventory table has the deletionVectors feature, and this program does not read deletion vectors (they would hide deleted inventory rows); write the inventory to a table without deletion vectors, or to Parquet files", name)
		}
		if !deltaReaderFeatureOK(f) {
			return nil, fmt.Errorf("inventory %s: the inventory table needs the reader feature %q, which this program does not support", name, f)
		}
	}
	if snap.Protocol.MinReaderVersion > 3 {
		return nil, fmt.Errorf("inventory %s: the inventory table needs reader version %d, which this program does not support", name, snap.Protocol.MinReaderVersion)
	}
	t := &deltaTable{name: name, store: store, snap: snap}
	var schema struct {
		Fields []deltaField `json:"fields"`
	}
	if err := json.Unmarshal([]byte(snap.Metadata.SchemaString), &schema); err != nil {
		return nil, fmt.Errorf("inventory %s: the table schema cannot be read: %v", name, err)
	}
	mode, _ := snap.Property("delta.columnMapping.mode")
	mapped := mode == "name" || mode == "id"
	for _, f := range schema.Fields {
		typ, k := deltaType(f.Type)
		t.cols = append(t.cols, column{name: f.Name, typ: typ, kind: k})
		phys := f.Name
		if p, ok := f.Metadata["delta.columnMapping.physicalName"].(string); ok && mapped && p != "" {
			phys = p
		}
		t.physical = append(t.physical, phys)
		t.parts = append(t.parts, slices.ContainsFunc(snap.PartitionColumns(), func(c string) bool { return strings.EqualFold(c, f.Name) }))
	}
	return t, nil
}

type deltaField struct {
	Name     string          `json:"name"`
	Type     json.RawMessage `json:"type"`
	Metadata map[string]any  `json:"metadata"`
}

// deltaType names a Delta schema type as Spark does in SQL, and says how it is read.
func deltaType(raw json.RawMessage) (string, kind) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "string":
			return "STRING", kindString
		case "long":
			return "BIGINT", kindInt
		case "integer":
			return "INT", kindInt
		case "short":
			return "SMALLINT", kindInt
		case "byte":
			return "TINYINT", kindInt
		case "boolean":
			return "BOOLEAN", kindBool
		case "double":
			return "DOUBLE", kindFloat
		case "float":
			return "FLOAT", kindFloat
		case "timestamp":
			return "TIMESTAMP", kindTimestamp
		case "timestamp_ntz":
			return "TIMESTAMP_NTZ", kindTimestamp
		}
		return strings.ToUpper(s), kindOther
	}
	var t struct {
		Type        string          `json:"type"`
		Fields      []deltaField    `json:"fields"`
		ElementType json.RawMessage `json:"elementType"`
		KeyType     json.RawMessage `json:"keyType"`
		ValueType   json.RawMessage `json:"valueType"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return string(raw), kindOther
	}
	switch t.Type {
	case "array":
		e, _ := deltaType(t.ElementType)
		return "ARRAY<" + e + ">", kindOther
	case "map":
		k, _ := deltaType(t.KeyType)
		v, _ := deltaType(t.ValueType)
		return "MAP<" + k + ", " + v + ">", kindOther
	}
	parts := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		typ, _ := deltaType(f.Type)
		parts[i] = f.Name + ": " + typ
	}
	return "STRUCT<" + strings.Join(parts, ", ") + ">", kindOther
}

func (t *deltaTable) location() string  { return t.name }
func (t *deltaTable) columns() []column { return t.cols }

func (t *deltaTable) scan(ctx context.Context, need []bool, fn func(row []sql.Value) error) error {
	var wants []pqWant
	for i, c := range t.cols {
		if !need[i] {
			continue
		}
		if t.parts[i] {
			return fmt.Errorf("inventory %s: column %s is a partition column of the inventory table; reading partition values is not supported: use a table that is not partitioned by it", t.name, c.name)
		}
		wants = append(wants, pqWant{name: t.physical[i], cell: i, kind: c.kind})
	}
	return t.snap.FileKeys(ctx, t.store, func(f deltalog.File) error {
		if f.Removed {
			return nil
		}
		if !f.Inside {
			return fmt.Errorf("inventory %s: the data file %s lies outside the inventory table (a shallow clone?); this is not supported", t.name, f.LogPath)
		}
		name := strings.TrimSuffix(t.name, "/") + "/" + f.Key
		pf, err := openParquet(ctx, t.store, f.Key, name)
		if err != nil {
			return err
		}
		defer pf.Close()
		return pf.scan(ctx, wants, len(t.cols), fn)
	})
}
