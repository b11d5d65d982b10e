package insight_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/insight"
)

// dvAdd is a live add with a deletion vector, as the JSON commits say.
type dvAdd struct {
	size, records, cardinality int64 // records -1: the stats say nothing
	inline                     bool
}

// dvAddsFromCommits replays the JSON commits of the table at dir from version 0 with
// encoding/json alone (no deltalog, no insight): the live adds that carry a deletion vector,
// by path, whether the table's protocol has the deletionVectors feature, and whether the log
// starts at 0.
func dvAddsFromCommits(t *testing.T, dir string) (adds map[string]dvAdd, feature, ok bool) {
	t.Helper()
	type vector struct {
		StorageType    string `json:"storageType"`
		PathOrInlineDv string `json:"pathOrInlineDv"`
		Offset         *int64 `json:"offset"`
		Cardinality    int64  `json:"cardinality"`
	}
	type file struct {
		Path           string  `json:"path"`
		Size           int64   `json:"size"`
		Stats          string  `json:"stats"`
		DeletionVector *vector `json:"deletionVector"`
	}
	key := func(f *file) string {
		k := f.Path
		if v := f.DeletionVector; v != nil {
			k += "|" + v.StorageType + v.PathOrInlineDv
			if v.Offset != nil {
				k += fmt.Sprintf("@%d", *v.Offset)
			}
		}
		return k
	}
	live := map[string]*file{}
	for v := 0; ; v++ {
		fh, err := os.Open(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", v)))
		if os.IsNotExist(err) {
			if v == 0 {
				return nil, false, false
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var a struct {
				Add      *file `json:"add"`
				Remove   *file `json:"remove"`
				Protocol *struct {
					ReaderFeatures []string `json:"readerFeatures"`
				} `json:"protocol"`
			}
			if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
				t.Fatalf("version %d: %v", v, err)
			}
			switch {
			case a.Remove != nil:
				delete(live, key(a.Remove))
			case a.Add != nil:
				live[key(a.Add)] = a.Add
			case a.Protocol != nil:
				feature = false
				for _, f := range a.Protocol.ReaderFeatures {
					feature = feature || f == "deletionVectors"
				}
			}
		}
		fh.Close()
	}
	adds = map[string]dvAdd{}
	for _, f := range live {
		if f.DeletionVector == nil {
			continue
		}
		var st struct {
			NumRecords *int64 `json:"numRecords"`
		}
		a := dvAdd{size: f.Size, records: -1, cardinality: f.DeletionVector.Cardinality, inline: f.DeletionVector.StorageType == "i"}
		if json.Unmarshal([]byte(f.Stats), &st) == nil && st.NumRecords != nil {
			a.records = *st.NumRecords
		}
		adds[f.Path] = a
	}
	return adds, feature, true
}

// TestDeletionVectorFigures: on every fixture whose log starts at version 0, inspect's
// deletion-vector figures are the sums, computed here from the JSON commits alone, over the
// live files with a vector: files and bytes, inline vectors, rows and deleted rows (the
// vectors' cardinality over the statistics' numRecords), the estimated deleted bytes, the files
// past OPTIMIZE's 5 % and past half, and what REORG … APPLY (PURGE) and a VACUUM after the
// retention reclaim (the files and the vector files the listing counts) and write. The
// snapshot reads most of these tables from a checkpoint, whose stats it reads then: the
// replay here never does. A table without the feature has no such figures, also with --lite.
func TestDeletionVectorFigures(t *testing.T) {
	withVectors := 0
	eachFixture(t, func(t *testing.T, name string) {
		dir, store, now := fixtureTable(t, name)
		adds, feature, ok := dvAddsFromCommits(t, dir)
		if !ok {
			t.Skip("the log does not start at version 0")
		}
		for _, lite := range []bool{false, true} {
			r, err := insight.Inspect(context.Background(), store, insight.Options{Now: now, Lite: lite})
			if err != nil {
				t.Fatal(err)
			}
			if !feature {
				if r.DeletionVectors != nil || len(adds) > 0 {
					t.Fatalf("lite %v: no deletionVectors feature, yet %d vectors and figures %+v", lite, len(adds), r.DeletionVectors)
				}
				continue
			}
			want := insight.DeletionVectors{VectorFiles: r.Files.DeletionVectors}
			var written int64
			for _, a := range adds {
				want.Files.Files++
				want.Files.Bytes += a.size
				if a.inline {
					want.InlineVectors++
				}
				if a.records <= 0 || a.cardinality > a.records {
					want.UnknownShare.Files++
					want.UnknownShare.Bytes += a.size
					written += a.size
					continue
				}
				deleted := int64(math.Round(float64(a.size) * float64(a.cardinality) / float64(a.records)))
				want.Rows += a.records
				want.DeletedRows += a.cardinality
				want.DeletedBytes += deleted
				written += a.size - deleted
				if a.cardinality*20 > a.records { // past 5 %
					want.PastOptimize.Files++
					want.PastOptimize.Bytes += a.size
					want.PastOptimize.DeletedBytes += deleted
				}
				if a.cardinality*2 > a.records {
					want.MostlyDeleted.Files++
					want.MostlyDeleted.Bytes += a.size
					want.MostlyDeleted.DeletedBytes += deleted
				}
			}
			if want.Rows > 0 {
				want.DeletedShare = float64(want.DeletedRows) / float64(want.Rows)
			}
			want.Purge = insight.Purge{Rewritten: want.Files, WrittenBytes: written, RetentionHours: r.RetentionHours,
				Reclaimable: insight.Count{Files: want.Files.Files + want.VectorFiles.Files, Bytes: want.Files.Bytes + want.VectorFiles.Bytes}}
			want.Purge.SavedBytes = want.Purge.Reclaimable.Bytes - written
			want.Purge.CostPerMonth = float64(max(want.Purge.SavedBytes, 0)) / (1 << 30) * r.Price.PerGBMonth
			if r.DeletionVectors == nil {
				t.Fatalf("lite %v: the table has the deletionVectors feature and no figures", lite)
			}
			if diff := cmp.Diff(want, *r.DeletionVectors); diff != "" {
				t.Errorf("lite %v (-from the commits +inspect):\n%s", lite, diff)
			}
			if !lite && len(adds) > 0 && r.Files.DeletionVectors.Files == 0 && want.InlineVectors < int64(len(adds)) {
				t.Errorf("vectors in files, none listed: %+v", r.Files)
			}
		}
		if len(adds) > 0 {
			withVectors++
			r, _ := insight.Inspect(context.Background(), store, insight.Options{Now: now})
			d := r.DeletionVectors
			t.Logf("%d files (%d B) with vectors, %d inline, %d vector files (%d B); %d of %d rows deleted (%.1f %%), ~%d B; past 5 %%: %d; past half: %d; unknown share: %d; purge: reclaims %d files, %d B, writes ~%d B, saves ~%d B",
				d.Files.Files, d.Files.Bytes, d.InlineVectors, d.VectorFiles.Files, d.VectorFiles.Bytes, d.DeletedRows, d.Rows, 100*d.DeletedShare, d.DeletedBytes,
				d.PastOptimize.Files, d.MostlyDeleted.Files, d.UnknownShare.Files, d.Purge.Reclaimable.Files, d.Purge.Reclaimable.Bytes, d.Purge.WrittenBytes, d.Purge.SavedBytes)
		}
	})
	if withVectors < 7 {
		t.Errorf("only %d fixtures with live deletion vectors checked", withVectors)
	}
}

// TestDeletionVectorFiguresByHand: the figures of three fixtures, read off their logs by
// hand. dat/deletion_vectors: one file of 1006 bytes and 5 rows, 4 of them deleted (80 %: past
// OPTIMIZE's 5 % and past half). table_with_deletion_logs (Databricks, read from its
// checkpoint at version 20, stats and stats_parsed): one file of 10 499 bytes, 100 rows, 2
// deleted (2 %: OPTIMIZE leaves it). basic-dv-with-checkpoint (46 DELETEs, read from its
// checkpoint at version 40 and 6 commits): two files of 2219 and 1495 bytes, 250 rows each,
// 23 deleted in each (9.2 %: 204 and 138 bytes).
func TestDeletionVectorFiguresByHand(t *testing.T) {
	for _, c := range []struct {
		name                        string
		files, bytes, rows, deleted int64
		deletedBytes, past, mostly  int64
		inline, vectorFiles         int64
	}{
		{"dat/deletion_vectors", 1, 1006, 5, 4, 805, 1, 1, 0, 1},
		{"delta-rs/table_with_deletion_logs", 1, 10499, 100, 2, 210, 0, 0, 0, 1},
		{"delta/basic-dv-with-checkpoint", 2, 3714, 500, 46, 342, 2, 0, 0, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, store, now := fixtureTable(t, c.name)
			r, err := insight.Inspect(context.Background(), store, insight.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			d := r.DeletionVectors
			got := []int64{d.Files.Files, d.Files.Bytes, d.Rows, d.DeletedRows, d.DeletedBytes, d.PastOptimize.Files, d.MostlyDeleted.Files, d.InlineVectors, d.VectorFiles.Files}
			want := []int64{c.files, c.bytes, c.rows, c.deleted, c.deletedBytes, c.past, c.mostly, c.inline, c.vectorFiles}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("files, bytes, rows, deleted, deleted bytes, past 5 %%, past half, inline, vector files (-want +got):\n%s", diff)
			}
			if p := d.Purge; p.Reclaimable.Files != c.files+c.vectorFiles || p.SavedBytes != c.deletedBytes+d.VectorFiles.Bytes {
				t.Errorf("purge: %+v", p)
			}
		})
	}
}
