package converted

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

var at = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// table writes a Delta log of one commit whose metaData carries conf, and loads it.
func table(t *testing.T, conf map[string]string, files map[string]string) (*mem.Store, *deltalog.Snapshot) {
	t.Helper()
	s := mem.New("abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t")
	md := map[string]any{"id": "3bffe7c2-e334-4419-a150-f6f47b565c78", "format": map[string]any{"provider": "parquet", "options": map[string]any{}},
		"schemaString": `{"type":"struct","fields":[]}`, "partitionColumns": []string{}, "configuration": conf, "createdTime": 1}
	lines := []any{
		map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
		map[string]any{"metaData": md},
		map[string]any{"commitInfo": map[string]any{"timestamp": 1, "operation": "UPDATE", "operationParameters": map[string]any{"predicate": `["xtable-delta-sync"]`}}},
	}
	var b strings.Builder
	for _, l := range lines {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	s.PutAt("_delta_log/00000000000000000000.json", []byte(b.String()), at)
	for k, v := range files {
		s.PutAt(k, []byte(v), at)
	}
	snap, err := deltalog.Load(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return s, snap
}

func TestDetect(t *testing.T) {
	xt := func(format string) string {
		return `{"lastInstantSynced":"2026-01-02T03:04:05Z","instantsToConsiderForNextSync":[],"version":0,"sourceTableFormat":"` + format + `","sourceIdentifier":"6930190235011463127"}`
	}
	tests := []struct {
		name     string
		conf     map[string]string
		files    map[string]string
		engine   string // "" for no conversion
		format   string
		evidence []string
	}{
		{"a Delta table", map[string]string{"delta.appendOnly": "false"}, nil, "", "", nil},
		{"OneLake Iceberg shortcut", nil, map[string]string{OneLakeConversionLog: "Status: Succeeded"}, "OneLake", "ICEBERG", []string{OneLakeConversionLog}},
		{"OneLake's log as a folder is not the mark", nil, map[string]string{OneLakeConversionLog + "/x": ""}, "", "", nil},
		{"XTable from Iceberg", map[string]string{XTableKey: xt("ICEBERG")}, nil, "Apache XTable", "ICEBERG", []string{"metaData.configuration.XTABLE_METADATA (version 0)"}},
		{"XTable from Hudi", map[string]string{XTableKey: xt("HUDI")}, nil, "Apache XTable", "HUDI", []string{"metaData.configuration.XTABLE_METADATA (version 0)"}},
		{"XTable before sourceTableFormat", map[string]string{XTableKey: `{"lastInstantSynced":"2026-01-02T03:04:05Z","instantsToConsiderForNextSync":[],"version":0}`}, nil, "Apache XTable", "", []string{"metaData.configuration.XTABLE_METADATA (version 0)"}},
		{"XTable's mark garbled: still XTable's", map[string]string{XTableKey: `{"lastInstantSynced":`}, nil, "Apache XTable", "", []string{"metaData.configuration.XTABLE_METADATA (version 0)"}},
		{"XTable mark naming Delta as the source: not a translation", map[string]string{XTableKey: xt("DELTA")}, nil, "", "", nil},
		{"OneLake translating with XTable: one conversion, both marks", map[string]string{XTableKey: xt("ICEBERG")}, map[string]string{OneLakeConversionLog: "ok"}, "OneLake", "ICEBERG",
			[]string{OneLakeConversionLog, "metaData.configuration.XTABLE_METADATA (version 0)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, snap := table(t, tt.conf, tt.files)
			c, err := Detect(context.Background(), s, snap)
			if err != nil {
				t.Fatal(err)
			}
			if tt.engine == "" {
				if c != nil {
					t.Fatalf("Detect: %+v, want nil", c)
				}
				return
			}
			if c == nil || c.Engine != tt.engine || c.SourceFormat != tt.format {
				t.Fatalf("Detect: %+v, want engine %q format %q", c, tt.engine, tt.format)
			}
			if diff := cmp.Diff(tt.evidence, c.Evidence); diff != "" {
				t.Errorf("Evidence (-want +got):\n%s", diff)
			}
			if c.Owner == "" || !strings.HasPrefix(c.Advice, "this Delta log is") || !strings.Contains(c.Advice, "vacuum it in") {
				t.Errorf("Owner %q, Advice %q: want both, the advice saying where to vacuum", c.Owner, c.Advice)
			}
		})
	}
}

// TestDetectWithoutSnapshot: OneLake writes its conversion log even when the conversion
// failed and the log cannot be read; the file alone is enough.
func TestDetectWithoutSnapshot(t *testing.T) {
	s := mem.New("file:///t")
	s.PutAt(OneLakeConversionLog, []byte("Status: Failed"), at)
	c, err := Detect(context.Background(), s, nil)
	if err != nil || c == nil || c.Engine != "OneLake" {
		t.Fatalf("Detect: %+v, %v; want OneLake", c, err)
	}
	if c, err := Detect(context.Background(), mem.New("file:///u"), nil); err != nil || c != nil {
		t.Fatalf("Detect on an empty store: %+v, %v; want nil, nil", c, err)
	}
}
