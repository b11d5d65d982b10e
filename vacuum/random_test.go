package vacuum

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/deltalog"
)

// z85Encode encodes 16 bytes as 20 Z85 characters: the test's own encoder, independent of the
// decoder under test.
func z85Encode(b [16]byte) string {
	var out []byte
	for i := 0; i < 16; i += 4 {
		v := uint32(b[i])<<24 | uint32(b[i+1])<<16 | uint32(b[i+2])<<8 | uint32(b[i+3])
		var chunk [5]byte
		for j := 4; j >= 0; j-- {
			chunk[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, chunk[:]...)
	}
	return string(out)
}

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

func TestZ85TestVector(t *testing.T) {
	var b [16]byte
	raw, _ := hex.DecodeString("d2c639aa8816431aaaf6d3fe2512ff61")
	copy(b[:], raw)
	if got := z85Encode(b); got != z85 {
		t.Fatalf("the test encoder gives %q, want %q", got, z85)
	}
}

// randomDV is a deletion vector with the file it lives in, computed by the test itself.
type randomDV struct {
	desc map[string]any
	key  string // "" for inline
}

func newRandomDV(r *rand.Rand) randomDV {
	if r.IntN(5) == 0 {
		return randomDV{desc: map[string]any{"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L", "sizeInBytes": 40, "cardinality": 6}}
	}
	var b [16]byte
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
	uuid := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	prefix := ""
	if r.IntN(2) == 0 {
		prefix = string(rune('a'+r.IntN(3))) + string(rune('a'+r.IntN(3)))
	}
	key := "deletion_vector_" + uuid + ".bin"
	if prefix != "" {
		key = prefix + "/" + key
	}
	return randomDV{desc: map[string]any{"storageType": "u", "pathOrInlineDv": prefix + z85Encode(b), "offset": 1, "sizeInBytes": 36, "cardinality": 1}, key: key}
}

// pathPool are raw keys and how the log spells them (several spellings for one key).
var pathPool = []struct {
	key       string
	spellings []string
}{
	{"a.parquet", []string{"a.parquet"}},
	{"b.parquet", []string{"b.parquet"}},
	{"c d.parquet", []string{"c%20d.parquet"}},
	{"p=1/e.parquet", []string{"p=1/e.parquet", "p%3D1/e.parquet"}},
	{"p=1/f.parquet", []string{"p=1/f.parquet"}},
	{"p=x:y/g.parquet", []string{"p=x%3Ay/g.parquet", "p=x%3ay/g.parquet"}},
	{"p=%3A/h.parquet", []string{"p=%253A/h.parquet"}},
	{"_p=2/i.parquet", []string{"_p=2/i.parquet"}},
	{"_change_data/cdc-1.parquet", []string{"_change_data/cdc-1.parquet"}},
	{"deep/er/j.parquet", []string{"deep/er/j.parquet"}},
	{"k.parquet", []string{"mem://bucket/table/k.parquet"}},
	{"ü/l.parquet", []string{"%C3%BC/l.parquet"}},
}

// extraFiles are on disk but never in the log; some are hidden.
var extraFiles = []string{
	"orphan.parquet", "p=1/orphan.parquet", "_tmp/x.parquet", ".hidden", "p=1/_SUCCESS",
	"p=1/.spark/x", "_p=2/.x.crc", "_q=3/x.parquet", "deep/_staging/x.parquet", "_delta_index/y",
	"deletion_vector_00000000-0000-0000-0000-000000000000.bin",
}

// oracleHidden is the hidden rule written out plainly for the oracle.
func oracleHidden(key string, partitionColumns []string) bool {
	for _, c := range strings.Split(key, "/") {
		if !strings.HasPrefix(c, "_") && !strings.HasPrefix(c, ".") {
			continue
		}
		exempt := strings.HasPrefix(c, "_change_data") || strings.HasPrefix(c, "_delta_index")
		for _, p := range partitionColumns {
			exempt = exempt || strings.HasPrefix(c, p+"=")
		}
		if !exempt {
			return true
		}
	}
	return false
}

// TestRandomHistories builds thousands of random table histories (adds, removes, deletion
// vectors, checkpoints, untracked and hidden files, random ages and retentions) and checks on
// each that the plan is exactly what an independent oracle computes: nothing protected is
// deleted, and everything unprotected, visible and older than the cutoff is.
func TestRandomHistories(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	for seed := 0; seed < n; seed++ {
		r := rand.New(rand.NewPCG(uint64(seed), 42))
		if err := randomHistory(t, r); err != "" {
			t.Fatalf("seed %d: %s", seed, err)
		}
	}
}

func randomHistory(t *testing.T, r *rand.Rand) string {
	partitionColumns := [][]string{nil, {"p"}, {"_p"}, {"p", "_p"}}[r.IntN(4)]
	tb := newTable(t, tableSpec{partitionColumns: partitionColumns})
	type entry struct {
		key     string
		dvKey   string
		removed bool
		ts      int64
	}
	state := map[string]entry{} // oracle replay keyed by (log spelling, dv id)
	dvOf := map[string]randomDV{}
	var checkpointAt int64 = -1
	var cpLines []any
	commits := 1 + r.IntN(6)
	for c := 0; c < commits; c++ {
		var actions []any
		touched := map[string]bool{} // the protocol allows one action per key and commit
		for a := 0; a < 1+r.IntN(4); a++ {
			p := pathPool[r.IntN(len(pathPool))]
			spelling := p.spellings[r.IntN(len(p.spellings))]
			var dv randomDV
			if r.IntN(3) == 0 {
				dv = newRandomDV(r)
			}
			id := spelling + "|"
			if dv.desc != nil {
				id += dv.desc["pathOrInlineDv"].(string)
				dvOf[id] = dv
			}
			if r.IntN(3) == 0 {
				// remove an existing entry if there is one
				for k, e := range state {
					if !e.removed && !touched[k] {
						id = k
						break
					}
				}
				if touched[id] {
					continue
				}
				touched[id] = true
				sp, _, _ := strings.Cut(id, "|")
				act := map[string]any{"path": sp, "dataChange": true}
				var ts int64
				if r.IntN(6) != 0 {
					ts = now.Add(-time.Duration(r.IntN(400)) * time.Hour).UnixMilli()
					act["deletionTimestamp"] = ts
				}
				if d, ok := dvOf[id]; ok && d.desc != nil {
					act["deletionVector"] = d.desc
				}
				actions = append(actions, map[string]any{"remove": act})
				key, _ := decodeOracle(sp)
				state[id] = entry{key: key, dvKey: dvOf[id].key, removed: true, ts: ts}
				continue
			}
			if touched[id] {
				continue
			}
			touched[id] = true
			act := map[string]any{"path": spelling, "size": 1, "modificationTime": 0, "dataChange": true}
			if dv.desc != nil {
				act["deletionVector"] = dv.desc
			}
			actions = append(actions, map[string]any{"add": act})
			state[id] = entry{key: p.key, dvKey: dv.key}
		}
		tb.commit(actions...)
		if r.IntN(4) == 0 {
			// A V2 JSON checkpoint of the state so far; later commits are replayed on it.
			checkpointAt = tb.version
			cpLines = []any{
				map[string]any{"checkpointMetadata": map[string]any{"version": checkpointAt}},
				map[string]any{"protocol": map[string]any{"minReaderVersion": 1, "minWriterVersion": 2}},
				map[string]any{"metaData": map[string]any{"id": "test-table", "format": map[string]any{"provider": "parquet"},
					"schemaString": "{}", "partitionColumns": orEmpty(partitionColumns), "configuration": map[string]string{}}},
			}
			ids := make([]string, 0, len(state))
			for id := range state {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			for _, id := range ids {
				e := state[id]
				sp, _, _ := strings.Cut(id, "|")
				act := map[string]any{"path": sp, "dataChange": true}
				if d, ok := dvOf[id]; ok && d.desc != nil {
					act["deletionVector"] = d.desc
				}
				if e.removed {
					if e.ts != 0 {
						act["deletionTimestamp"] = e.ts
					}
					cpLines = append(cpLines, map[string]any{"remove": act})
				} else {
					act["size"], act["modificationTime"] = 1, 0
					cpLines = append(cpLines, map[string]any{"add": act})
				}
			}
			data, err := deltalog.EncodeCommit(cpLines)
			if err != nil {
				t.Fatal(err)
			}
			tb.store.PutAt(fmt.Sprintf("_delta_log/%020d.checkpoint.0b6a1c3e-7d1f-4c2a-9a3e-1f2e3d4c5b6a.json", checkpointAt), data, now)
			if r.IntN(2) == 0 {
				// The commits up to the checkpoint were cleaned up.
				for v := int64(0); v <= checkpointAt; v++ {
					tb.store.Delete(context.Background(), []string{deltalog.CommitKey(v)})
				}
			}
		}
	}
	// Files on disk with random ages.
	age := func() time.Duration { return time.Duration(r.IntN(400)) * time.Hour }
	onDisk := map[string]time.Duration{}
	for _, p := range pathPool {
		if r.IntN(4) != 0 {
			onDisk[p.key] = age()
		}
	}
	for _, d := range dvOf {
		if d.key != "" && r.IntN(4) != 0 {
			onDisk[d.key] = age()
		}
	}
	for _, f := range extraFiles {
		if r.IntN(2) == 0 {
			onDisk[f] = age()
		}
	}
	for k, a := range onDisk {
		tb.file(k, a)
	}
	retainHours := float64(r.IntN(250))
	plan := tb.plan(Options{RetainHours: &retainHours, DisableRetentionCheck: true})

	// The oracle.
	cutoff := now.Add(-time.Duration(retainHours) * time.Hour)
	protected := map[string]bool{}
	for _, e := range state {
		if !e.removed || e.ts >= cutoff.UnixMilli() {
			protected[e.key] = true
			if e.dvKey != "" {
				protected[e.dvKey] = true
			}
		}
	}
	want := []string{}
	for k, a := range onDisk {
		if !protected[k] && !oracleHidden(k, partitionColumns) && now.Add(-a).Before(cutoff) {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	got := []string{}
	for _, f := range plan.Files.MustCollect() {
		got = append(got, f.Path)
	}
	sort.Strings(got)
	if diff := cmp.Diff(want, got); diff != "" {
		return fmt.Sprintf("retain %vh, partition columns %v, checkpoint at %d: deleted (-oracle +plan):\n%s\nlog state: %v", retainHours, partitionColumns, checkpointAt, diff, state)
	}
	return ""
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func decodeOracle(spelling string) (string, error) {
	if strings.HasPrefix(spelling, "mem://bucket/table/") {
		return strings.TrimPrefix(spelling, "mem://bucket/table/"), nil
	}
	return url.PathUnescape(spelling)
}
