package deltalog

import "testing"

// TestNumRecordsOf: numRecords is read from the top level of the stats object only, as a whole
// number, 0 or more; anything else (a nested numRecords, a string, a fraction, a duplicate key,
// broken JSON) leaves it unknown rather than failing the read.
func TestNumRecordsOf(t *testing.T) {
	for _, c := range []struct {
		stats string
		n     int64
		ok    bool
	}{
		{`{"numRecords":250,"minValues":{"id":0},"maxValues":{"id":249},"nullCount":{"id":0},"tightBounds":false}`, 250, true},
		{`{"minValues":{"a":"{\"numRecords\":9}"},"numRecords":3}`, 3, true},
		{`{"numRecords":0}`, 0, true},
		{` { "numRecords" : 7 } `, 7, true},
		{`{"minValues":{"numRecords":5}}`, 0, false},
		{`{"numRecords":"5"}`, 0, false},
		{`{"numRecords":5.0}`, 0, false},
		{`{"numRecords":-1}`, 0, false},
		{`{"numRecords":1e3}`, 0, false},
		{`{"numRecords":99999999999999999999}`, 0, false},
		{`{"a":1,"a":2,"numRecords":5}`, 0, false},
		{`{"numRecords":`, 0, false},
		{`[{"numRecords":5}]`, 0, false},
		{`{}`, 0, false},
		{``, 0, false},
		{"{\"a\":\"\xff\",\"numRecords\":5}", 0, false},
	} {
		n, ok := numRecordsOf(c.stats)
		if n != c.n || ok != c.ok {
			t.Errorf("numRecordsOf(%q) = %d, %v; want %d, %v", c.stats, n, ok, c.n, c.ok)
		}
		var d statsDecoder
		if n, ok := d.numRecords([]byte(c.stats)); n != c.n || ok != c.ok {
			t.Errorf("numRecords(%q) = %d, %v; want %d, %v", c.stats, n, ok, c.n, c.ok)
		}
	}
}

// TestParquetNumRecords: a checkpoint read with kindStats gives each add the numRecords of its
// stats string (Spark's checkpoints), of its stats_parsed struct when it has one
// (Databricks'), or of stats_parsed alone (a checkpoint written with
// delta.checkpoint.writeStatsAsJson false); read without it, none, and the stats are not
// kept as strings.
func TestParquetNumRecords(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want map[string]int64 // path -> numRecords
	}{
		{"delta/basic-dv-with-checkpoint/_delta_log/00000000000000000010.checkpoint.parquet", map[string]int64{
			"part-00000-87eec267-9acd-4e9a-a216-ec596132203d-c000.snappy.parquet": 250,
		}},
		{"delta-rs/table_with_deletion_logs/_delta_log/00000000000000000020.checkpoint.parquet", map[string]int64{
			"part-00000-cb251d5e-b665-437a-a9a7-fbfc5137c77d.c000.snappy.parquet": 100,
		}},
		{"delta-kernel-rs/v1-multi-part-partitioned-struct-stats-only/_delta_log/00000000000000000005.checkpoint.0000000001.0000000003.parquet", nil},
	} {
		acts := pqReadFixture(t, c.rel, KindAdd|kindStats)
		if len(acts) == 0 {
			t.Fatalf("%s: no adds", c.rel)
		}
		for _, a := range acts {
			n, ok := a.Add.NumRecords()
			if !ok || n <= 0 {
				t.Errorf("%s: add %s has no numRecords (%d, %v)", c.rel, a.Add.Path, n, ok)
			}
			if a.Add.Stats != "" {
				t.Errorf("%s: the stats of %s are kept as a string", c.rel, a.Add.Path)
			}
			if w, named := c.want[a.Add.Path]; named && n != w {
				t.Errorf("%s: add %s has %d records, want %d", c.rel, a.Add.Path, n, w)
			}
		}
		for _, a := range pqReadFixture(t, c.rel, KindAdd) {
			if _, ok := a.Add.NumRecords(); ok {
				t.Errorf("%s: read without kindStats, %s has numRecords", c.rel, a.Add.Path)
			}
		}
	}
}
