package iceberg

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hamba/avro/v2/ocf"

	"github.com/deltavacuum/deltavacuum/storage/local"
)

func TestParseName(t *testing.T) {
	tests := []struct {
		name    string
		kind    NameKind
		version int64
		ok      bool
	}{
		{"v1.metadata.json", NameHadoop, 1, true},
		{"v12.gz.metadata.json", NameHadoop, 12, true},
		{"v3-9c12d441-03fe-4693-9a96-a0705ddf69c1.metadata.json", NameUniForm, 3, true},
		{"00012-9c12d441-03fe-4693-9a96-a0705ddf69c1.metadata.json", NameSequence, 12, true},
		{"00012-9c12d441-03fe-4693-9a96-a0705ddf69c1.gz.metadata.json", NameSequence, 12, true},
		{"321.metadata.json", NameNumber, 321, true},
		{"12-9c12d441-03fe-4693-9a96-a0705ddf69c1.metadata.json", NameOther, -1, true}, // fewer than 5 digits
		{"9c12d441-03fe-4693-9a96-a0705ddf69c1.metadata.json", NameOther, -1, true},
		{"v-1.metadata.json", NameOther, -1, true},
		{"v1x.metadata.json", NameOther, -1, true},
		{"v99999999999999999999.metadata.json", NameOther, -1, true},
		{"x.metadata.json", NameOther, -1, true},
		{".metadata.json", 0, 0, false},
		{"v1.metadata.json.tmp", 0, 0, false},
		{"snap-1.avro", 0, 0, false},
	}
	for _, tt := range tests {
		kind, version, _, ok := parseName(tt.name)
		if ok != tt.ok || ok && (kind != tt.kind || version != tt.version) {
			t.Errorf("parseName(%q) = %v, %d, %v; want %v, %d, %v", tt.name, kind, version, ok, tt.kind, tt.version, tt.ok)
		}
	}
}

// TestChooseCurrent: which metadata file is current, by hint and by name.
func TestChooseCurrent(t *testing.T) {
	s1 := snap{id: 1, ms: 1_700_000_000_000, list: loc + "/metadata/snap-1.avro"}
	v := func(updated int64) []byte { return meta(t, loc, updated, 1, []snap{s1}, nil, nil) }
	tests := []struct {
		name     string
		files    map[string][]byte
		want     string
		wantHint string // Hint.Note contains it
	}{
		{"highest Hadoop version without a hint", map[string][]byte{"v1.metadata.json": v(1), "v2.metadata.json": v(2), "v10.metadata.json": v(3)}, "v10.metadata.json", ""},
		{"hint and newer consecutive versions", map[string][]byte{"v1.metadata.json": v(1), "v2.metadata.json": v(2), "v3.metadata.json": v(3), "version-hint.text": []byte("1\n")}, "v3.metadata.json", "newer than the hint"},
		{"hint stops at a gap, as Java does", map[string][]byte{"v1.metadata.json": v(1), "v2.metadata.json": v(2), "v4.metadata.json": v(3), "version-hint.text": []byte("1")}, "v2.metadata.json", "v4.metadata.json has a higher version"},
		{"hint that is garbage is ignored", map[string][]byte{"v1.metadata.json": v(1), "v2.metadata.json": v(2), "version-hint.text": []byte("../../etc/passwd")}, "v2.metadata.json", "ignored"},
		{"empty hint is ignored", map[string][]byte{"v1.metadata.json": v(1), "v2.metadata.json": v(2), "version-hint.text": []byte("")}, "v2.metadata.json", "ignored"},
		{"hint over 4096 bytes is ignored", map[string][]byte{"v1.metadata.json": v(1), "v2.metadata.json": v(2), "version-hint.text": bytes.Repeat([]byte("1"), 5000)}, "v2.metadata.json", "not read"},
		{"hint naming a file (pyiceberg)", map[string][]byte{"9c12d441-03fe-4693-9a96-a0705ddf69c1.metadata.json": v(1), "v2.metadata.json": v(2), "version-hint.text": []byte("9c12d441-03fe-4693-9a96-a0705ddf69c1")}, "9c12d441-03fe-4693-9a96-a0705ddf69c1.metadata.json", ""},
		{"hint naming a missing bare name is ignored", map[string][]byte{"v2.metadata.json": v(2), "version-hint.text": []byte("nothere")}, "v2.metadata.json", "ignored"},
		{"sequence names (Java and Python catalogs, Snowflake)", map[string][]byte{
			"00000-11111111-1111-1111-1111-111111111111.metadata.json": v(1),
			"00001-22222222-2222-2222-2222-222222222222.metadata.json": v(2)}, "00001-22222222-2222-2222-2222-222222222222.metadata.json", ""},
		{"UniForm names", map[string][]byte{
			"v1-11111111-1111-1111-1111-111111111111.metadata.json": v(1),
			"v2-22222222-2222-2222-2222-222222222222.metadata.json": v(2)}, "v2-22222222-2222-2222-2222-222222222222.metadata.json", ""},
		{"numbered names (Fabric's documentation)", map[string][]byte{"320.metadata.json": v(1), "321.metadata.json": v(2)}, "321.metadata.json", ""},
		{"one version twice: the later last-updated-ms", map[string][]byte{
			"00003-11111111-1111-1111-1111-111111111111.metadata.json": v(9),
			"00003-22222222-2222-2222-2222-222222222222.metadata.json": v(8)}, "00003-11111111-1111-1111-1111-111111111111.metadata.json", ""},
		{"one version twice, the same state", map[string][]byte{"v3.metadata.json": v(3), "v3.gz.metadata.json": gz(v(3))}, "v3.gz.metadata.json", ""},
		{"only unversioned names: the latest last-updated-ms", map[string][]byte{"a.metadata.json": v(5), "b.metadata.json": v(4)}, "a.metadata.json", ""},
		{"an older file that is not Iceberg is ignored", map[string][]byte{"v1.metadata.json": []byte(`{"trunc`), "v2.metadata.json": v(2)}, "v2.metadata.json", ""},
		{"a hostile x.metadata.json beside a table", map[string][]byte{"x.metadata.json": []byte(`{"format-version":2}`), "v1.metadata.json": v(1)}, "v1.metadata.json", ""},
		{"gzip-compressed metadata", map[string][]byte{"v1.gz.metadata.json": gz(v(1))}, "v1.gz.metadata.json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t)
			tb.put("metadata/snap-1.avro", manifestListBytes(t, ocf.Null))
			for k, b := range tt.files {
				tb.put("metadata/"+k, b)
			}
			it, err := Find(context.Background(), tb.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if it == nil || it.Current.Key != "metadata/"+tt.want {
				t.Fatalf("Current = %+v, want metadata/%s", it, tt.want)
			}
			note := ""
			if it.Hint != nil {
				note = it.Hint.Note
			}
			if tt.wantHint != "" && !strings.Contains(note, tt.wantHint) {
				t.Errorf("Hint = %+v, want a note with %q", it.Hint, tt.wantHint)
			}
			for k, b := range tt.files {
				if _, err := decodeMetadata(b, 1<<20); err != nil && strings.HasSuffix(k, metadataSuffix) && !containsIgnored(it.Ignored, "metadata/"+k) {
					t.Errorf("Ignored = %+v, want it to list metadata/%s", it.Ignored, k)
				}
			}
		})
	}
}

func containsIgnored(ig []Ignored, key string) bool {
	for _, i := range ig {
		if i.Key == key && i.Reason != "" {
			return true
		}
	}
	return false
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// TestSymlinks: the store never follows links; a link named like the newest metadata file is
// an unreadable view, a link named like an older one is ignored.
func TestSymlinks(t *testing.T) {
	for _, newest := range []bool{true, false} {
		t.Run(fmt.Sprint("newest=", newest), func(t *testing.T) {
			dir := t.TempDir()
			md := filepath.Join(dir, "metadata")
			os.MkdirAll(md, 0o755)
			loc := "file://" + dir
			s1 := snap{id: 1, ms: 1, list: loc + "/metadata/snap-1.avro"}
			os.WriteFile(filepath.Join(md, "snap-1.avro"), manifestListBytes(t, ocf.Null), 0o644)
			os.WriteFile(filepath.Join(dir, "elsewhere.json"), meta(t, loc, 9, 1, []snap{s1}, nil, nil), 0o644)
			os.WriteFile(filepath.Join(md, "v2.metadata.json"), meta(t, loc, 2, 1, []snap{s1}, nil, nil), 0o644)
			link := "v1.metadata.json"
			if newest {
				link = "v3.metadata.json"
			}
			if err := os.Symlink(filepath.Join(dir, "elsewhere.json"), filepath.Join(md, link)); err != nil {
				t.Skip(err)
			}
			st, err := local.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			it, err := Find(context.Background(), st, Options{})
			if newest {
				if err == nil || !strings.Contains(err.Error(), "v3.metadata.json") {
					t.Fatalf("Find: %v, %v; want ErrUnreadable naming the link", it, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if it.Current.Key != "metadata/v2.metadata.json" || !containsIgnored(it.Ignored, "metadata/v1.metadata.json") {
				t.Errorf("Current %s, Ignored %+v; want v2 current and the link ignored", it.Current.Key, it.Ignored)
			}
		})
	}
}

// TestConversion: the Delta version the converters record.
func TestConversion(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	xt := func(id string) string {
		return `{"lastInstantSynced":"2026-01-02T03:04:05.678Z","instantsToConsiderForNextSync":[],"version":0,"sourceTableFormat":"DELTA"` + id + `}`
	}
	tests := []struct {
		name     string
		props    map[string]string
		summary  map[string]string
		want     *Conversion
		wantNote string
	}{
		{"none", nil, nil, nil, ""},
		{"UniForm", map[string]string{"delta-version": "41", "delta-timestamp": "1767323045678"}, nil,
			&Conversion{Engine: "Delta UniForm", Version: i(41), CommitTime: time.UnixMilli(1767323045678).UTC(), Property: "properties.delta-version"}, ""},
		{"UniForm without a timestamp", map[string]string{"delta-version": "0"}, nil,
			&Conversion{Engine: "Delta UniForm", Version: i(0), Property: "properties.delta-version"}, ""},
		{"UniForm version not a number", map[string]string{"delta-version": "forty"}, nil, nil, "not a Delta version"},
		{"UniForm negative version", map[string]string{"delta-version": "-3"}, nil, nil, "not a Delta version"},
		{"UniForm bad timestamp", map[string]string{"delta-version": "4", "delta-timestamp": "soon"}, nil,
			&Conversion{Engine: "Delta UniForm", Version: i(4), Property: "properties.delta-version"}, "not a time"},
		{"XTable in the summary", nil, map[string]string{"XTABLE_METADATA": xt(`,"sourceIdentifier":"17"`)},
			&Conversion{Engine: "Apache XTable", Version: i(17), CommitTime: time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC), Property: "summary.XTABLE_METADATA"}, ""},
		{"XTable in the properties", map[string]string{"XTABLE_METADATA": xt(`,"sourceIdentifier":"17"`)}, nil,
			&Conversion{Engine: "Apache XTable", Version: i(17), CommitTime: time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC), Property: "properties.XTABLE_METADATA"}, ""},
		{"XTable before sourceIdentifier: a time only", map[string]string{"XTABLE_METADATA": xt(``)}, nil,
			&Conversion{Engine: "Apache XTable", CommitTime: time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC), Property: "properties.XTABLE_METADATA"}, ""},
		{"XTable from Hudi: not a Delta conversion", map[string]string{"XTABLE_METADATA": `{"lastInstantSynced":"2026-01-02T03:04:05Z","sourceTableFormat":"HUDI","sourceIdentifier":"20260102"}`}, nil, nil, ""},
		{"XTable garbled", map[string]string{"XTABLE_METADATA": `{"lastInstantSynced":`}, nil, nil, "cannot be read"},
		{"XTable identifier not a version", map[string]string{"XTABLE_METADATA": xt(`,"sourceIdentifier":"abc"`)}, nil, nil, "cannot be read"},
		{"UniForm and XTable disagree: the older", map[string]string{"delta-version": "20", "XTABLE_METADATA": xt(`,"sourceIdentifier":"17"`)}, nil,
			&Conversion{Engine: "Apache XTable", Version: i(17), CommitTime: time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC), Property: "properties.XTABLE_METADATA"}, "the older is used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := newTable(t)
			tb.put("metadata/snap-1.avro", manifestListBytes(t, ocf.Null))
			tb.put("metadata/v1.metadata.json", meta(t, loc, 1, 1, []snap{{id: 1, ms: 1, list: loc + "/metadata/snap-1.avro", summary: tt.summary}}, tt.props, nil))
			it, err := Find(context.Background(), tb.s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil {
				tt.want.File = "metadata/v1.metadata.json"
			}
			if diff := cmp.Diff(tt.want, it.Conversion); diff != "" {
				t.Errorf("Conversion (-want +got):\n%s", diff)
			}
			if tt.wantNote != "" && !strings.Contains(strings.Join(it.Notes, "\n"), tt.wantNote) {
				t.Errorf("Notes = %q, want one with %q", it.Notes, tt.wantNote)
			}
		})
	}
}

func TestLagOf(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	latest := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		t    Table
		want Lag
	}{
		{"converted version and time", Table{Conversion: &Conversion{Version: i(40), CommitTime: latest.Add(-3 * time.Hour)}}, Lag{Versions: i(5), Behind: 3 * time.Hour}},
		{"converted version, snapshot time", Table{Conversion: &Conversion{Version: i(45)}, Snapshot: &Snapshot{Timestamp: latest.Add(-time.Hour)}}, Lag{Versions: i(0), Behind: time.Hour, AtLeast: true}},
		{"no converter", Table{Snapshot: &Snapshot{Timestamp: latest.Add(-2 * time.Hour)}}, Lag{Behind: 2 * time.Hour, AtLeast: true}},
		{"snapshot after the latest commit", Table{Snapshot: &Snapshot{Timestamp: latest.Add(time.Hour)}}, Lag{AtLeast: true}},
		{"converted version above the latest (a log read before the conversion)", Table{Conversion: &Conversion{Version: i(50)}}, Lag{Versions: i(0)}},
		{"nothing known", Table{}, Lag{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, LagOf(&tt.t, 45, latest)); diff != "" {
			t.Errorf("%s: LagOf (-want +got):\n%s", tt.name, diff)
		}
	}
}
