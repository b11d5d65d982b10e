package run

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// A record's file lines are what json.Marshal writes for them, whatever the path holds
// (quotes, backslashes, control characters, HTML, line and paragraph separators, non-ASCII),
// an unknown time (0) written as 0 too; a path that is not UTF-8 fails as Marshal fails.
func TestAppendEntryIsMarshal(t *testing.T) {
	paths := []string{"a.parquet", `p="x"/f\g.parquet`, "tab\there\nnl\x00\x1f\x7f", "<b>&amp;</b>",
		"\u2028\u2029", "été/日本語/🙂.parquet", "%20 +", ""}
	for _, p := range paths {
		for _, e := range []Entry{{Path: p, Size: 12, ModTime: 1_700_000_000_123}, {Path: p, Size: -1}, {Path: p, Size: math.MaxInt64, ModTime: math.MinInt64}} {
			want, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := appendEntry(nil, e)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, append(want, '\n')) {
				t.Errorf("appendEntry(%+v) = %s, want %s", e, got, want)
			}
		}
	}
	bad := Entry{Path: "a\xffb", Size: 1}
	if _, err := json.Marshal(bad); err == nil {
		t.Fatal("json.Marshal accepts invalid UTF-8; the comparison is moot")
	}
	if _, err := appendEntry(nil, bad); err == nil {
		t.Error("invalid UTF-8 path: no error")
	}
}

// WriteFrom records the files it is given one at a time as Write records them from Files: the
// same record reads back, by Read (compress/gzip) and by zcat's format alike, as Write's does.
// An error from the files leaves an earlier record in place.
func TestWriteFromIsWrite(t *testing.T) {
	ctx := context.Background()
	const id = "20261201T153000Z-1a2b3c4d"
	files := []Entry{{Path: "p=1/a.parquet", Size: 5, ModTime: 1_700_000_000_123}, {Path: "p=1/.a.parquet.crc", Size: -1}, {Path: "é/b c.parquet", Size: 7}}
	rec := Record{ID: id, Table: "mem://t", Status: StatusRunning, StartedAt: time.Date(2026, 12, 1, 15, 30, 0, 0, time.UTC), Mode: "FULL",
		Recovery: storage.Recovery{Kind: "none", Detail: "x"}, NumFiles: 2, Bytes: 12}
	viaWrite, viaFrom := mem.New("mem://t"), mem.New("mem://t")
	r1 := rec
	r1.Files = files
	if err := WriteRecord(ctx, viaWrite, &r1); err != nil {
		t.Fatal(err)
	}
	r2 := rec
	err := WriteRecordFrom(ctx, viaFrom, &r2, func(add func(Entry) error) error {
		for _, e := range files {
			if err := add(e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ReadRecord(ctx, viaWrite, id)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadRecord(ctx, viaFrom, id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("WriteFrom's record differs from Write's (-Write +WriteFrom):\n%s", diff)
	}
	if diff := cmp.Diff(files, b.Files); diff != "" {
		t.Fatalf("files read back (-written +read):\n%s", diff)
	}
	failed := errors.New("the plan no longer reads back")
	r3 := rec
	r3.Status = StatusCompleted
	if err := WriteRecordFrom(ctx, viaFrom, &r3, func(add func(Entry) error) error { _ = add(files[0]); return failed }); !errors.Is(err, failed) {
		t.Fatalf("WriteFrom with failing files: %v", err)
	}
	if c, err := ReadRecord(ctx, viaFrom, id); err != nil || c.Status != StatusRunning || len(c.Files) != len(files) {
		t.Fatalf("the earlier record was not kept: %+v, %v", c, err)
	}
}

// BenchmarkWriteRecord writes the record of a run of 200,000 files (Spark's names in 100
// partitions), as a run does twice.
func BenchmarkWriteRecord(b *testing.B) {
	ctx := context.Background()
	const id = "20261201T153000Z-1a2b3c4d"
	r := rand.New(rand.NewPCG(1, 2))
	rec := Record{ID: id, Table: "mem://t", Status: StatusRunning, Mode: "FULL", Recovery: storage.Recovery{Kind: "none"}}
	for i := range 200_000 {
		rec.Files = append(rec.Files, Entry{
			Path: fmt.Sprintf("date=2020-%02d-%02d/part-%05d-%08x-%04x-%04x-%04x-%012x.c000.snappy.parquet", 1+i%12, 1+i%28, r.IntN(20000), r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff),
			Size: r.Int64N(1 << 30), ModTime: 1_700_000_000_000 + r.Int64N(1<<30),
		})
	}
	s := mem.New("mem://t")
	for b.Loop() {
		if err := WriteRecord(ctx, s, &rec); err != nil {
			b.Fatal(err)
		}
	}
	o, err := s.Stat(ctx, recordKey(id))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(o.Size), "record-bytes")
}
