// Package tablegen describes synthetic Delta tables for benchmarks: N live files recorded in a
// Parquet checkpoint and a few JSON commits after it, M tombstoned files, K untracked files, P
// partitions and some deletion vectors, with Spark-like paths and stats. Every name, action and
// listing entry is a pure function of the Spec and an index, so a table can be written to disk
// (WriteLocal), restored after a vacuum (Reset), or served without any file at all
// (bench/synthetic), and the three agree exactly.
package tablegen

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"strings"
	"time"
)

// CheckpointVersion is the version of the generated checkpoint. Commits before it are absent
// (cleaned up), commit CheckpointVersion is present (its adds are in the checkpoint) and
// Spec.Commits JSON commits follow it.
const CheckpointVersion = 10

// DVsPerFile is how many deletion vectors share one deletion_vector_*.bin file, at increasing
// offsets, as a Spark task writes them.
const DVsPerFile = 64

// Spec describes a table. The zero values of the optional fields take defaults (see Normalize).
type Spec struct {
	Live       int64   `json:"live"`       // live add actions
	Tombstones int64   `json:"tombstones"` // removed files still on disk (tombstones older than the retention)
	Untracked  int64   `json:"untracked"`  // files on disk that no action names
	Partitions int     `json:"partitions"` // partition directories (0: unpartitioned)
	DVFraction float64 `json:"dvFraction"` // fraction of live adds (and of tombstones) with a deletion vector
	// Commits is the number of JSON commits after the checkpoint (default 3).
	Commits int `json:"commits"`
	// JSONTombstoneFraction is the fraction of tombstones written in the JSON commits after the
	// checkpoint (the rest are remove rows of the checkpoint); default 0.5. VACUUM LITE sees
	// only these.
	JSONTombstoneFraction float64 `json:"jsonTombstoneFraction"`
	// JSONAddFraction is the fraction of live adds written in the JSON commits after the
	// checkpoint (default 0.003).
	JSONAddFraction float64 `json:"jsonAddFraction"`
	// CheckpointPartRows, when positive, splits a checkpoint of more rows into a multi-part
	// checkpoint (N.checkpoint.P.T.parquet) of parts of at most that many rows, as Delta Spark
	// does with spark.databricks.delta.checkpoint.partSize.
	CheckpointPartRows int64 `json:"checkpointPartRows,omitempty"`
	// NoStats leaves add.stats out.
	NoStats bool `json:"noStats,omitempty"`
	// Seed varies the UUIDs in the names.
	Seed uint64 `json:"seed"`
	// Time is when the table was generated; every data file's modification time and every
	// tombstone's deletionTimestamp is AgeDays before it, the commits a few minutes later.
	Time    time.Time `json:"time"`
	AgeDays int       `json:"ageDays"`
}

// Normalize fills the defaults in.
func (s *Spec) Normalize() {
	if s.Commits <= 0 {
		s.Commits = 3
	}
	if s.JSONTombstoneFraction == 0 {
		s.JSONTombstoneFraction = 0.5
	}
	if s.JSONAddFraction == 0 {
		s.JSONAddFraction = 0.003
	}
	if s.AgeDays == 0 {
		s.AgeDays = 30
	}
	if s.Time.IsZero() {
		s.Time = time.Now().UTC().Truncate(time.Second)
	}
}

// Table is a normalized Spec with its derived layout.
type Table struct {
	Spec
	total     int64  // data files on disk: live + tombstones + untracked
	mul, inv  uint64 // the scramble (g*mul mod total) that spreads kinds over names
	width     int    // digits of the per-directory sequence number in names
	liveDVs   int64  // live adds with a deletion vector
	tombDVs   int64  // tombstones with a deletion vector
	jsonAdds  int64  // live adds in JSON commits after the checkpoint
	jsonTombs int64  // tombstones in JSON commits after the checkpoint
	ckptTombs int64
	oldMs     int64 // modification time of data files, ms
}

// New returns the table a spec describes.
func New(s Spec) (*Table, error) {
	s.Normalize()
	if s.Live < 1 || s.Tombstones < 0 || s.Untracked < 0 || s.Partitions < 0 || s.DVFraction < 0 || s.DVFraction > 1 {
		return nil, fmt.Errorf("tablegen: invalid spec %+v", s)
	}
	t := &Table{Spec: s}
	t.total = s.Live + s.Tombstones + s.Untracked
	t.mul = 0x9E3779B97F4A7C15 % uint64(t.total)
	for t.mul < 2 || gcd(t.mul, uint64(t.total)) != 1 {
		t.mul++
	}
	if t.total == 1 {
		t.mul = 1
	}
	t.inv = modInverse(t.mul, uint64(t.total))
	perDir := t.total
	if s.Partitions > 0 {
		perDir = (t.total + int64(s.Partitions) - 1) / int64(s.Partitions)
	}
	t.width = max(5, len(fmt.Sprint(perDir)))
	t.liveDVs = int64(float64(s.Live) * s.DVFraction)
	t.tombDVs = int64(float64(s.Tombstones) * s.DVFraction)
	t.jsonAdds = int64(float64(s.Live) * s.JSONAddFraction)
	t.jsonTombs = int64(float64(s.Tombstones) * s.JSONTombstoneFraction)
	t.ckptTombs = s.Tombstones - t.jsonTombs
	t.oldMs = s.Time.Add(-time.Duration(s.AgeDays) * 24 * time.Hour).UnixMilli()
	return t, nil
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// modInverse returns x with a*x = 1 mod m (a and m coprime).
func modInverse(a, m uint64) uint64 {
	if m == 1 {
		return 0
	}
	// Extended Euclid on signed 128-bit-safe values: m fits in 63 bits here.
	var t, newT int64 = 0, 1
	r, newR := int64(m), int64(a%m)
	for newR != 0 {
		q := r / newR
		t, newT = newT, t-q*newT
		r, newR = newR, r-q*newR
	}
	if t < 0 {
		t += int64(m)
	}
	return uint64(t)
}

func mulmod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, rem := bits.Div64(hi%m, lo, m)
	return rem
}

// Kind is what a data file is to the table.
type Kind int

// The kinds of data files.
const (
	KindLive Kind = iota
	KindTombstone
	KindUntracked
)

// Total is the number of data files on disk (DV files not counted).
func (t *Table) Total() int64 { return t.total }

// Stale is the number of files a FULL vacuum with retention 0 deletes: tombstoned and
// untracked data files and the deletion-vector files only tombstones name.
func (t *Table) Stale() int64 { return t.Tombstones + t.Untracked + t.StaleDVFiles() }

// LiveDVFiles is the number of deletion-vector files live adds name.
func (t *Table) LiveDVFiles() int64 { return (t.liveDVs + DVsPerFile - 1) / DVsPerFile }

// StaleDVFiles is the number of deletion-vector files only tombstones name.
func (t *Table) StaleDVFiles() int64 { return (t.tombDVs + DVsPerFile - 1) / DVsPerFile }

// LiteDeletes is the number of files a LITE vacuum deletes: tombstones of the JSON commits and
// the DV files only they name.
func (t *Table) LiteDeletes() int64 {
	n := t.jsonTombs
	// DV'd tombstones are the first tombDVs ranks; JSON tombstones are the last jsonTombs.
	first := t.Tombstones - t.jsonTombs // rank of the first JSON tombstone
	if first < t.tombDVs {
		lo, hi := first/DVsPerFile, (t.tombDVs-1)/DVsPerFile
		n += hi - lo + 1
		// A DV file shared with a checkpoint tombstone is still named by that expired
		// tombstone only, so LITE deletes it too: counted once above.
	}
	return n
}

// rank maps a file id g (its position in name order) to its rank in kind order: live files
// are ranks [0, Live), tombstones [Live, Live+Tombstones), untracked the rest.
func (t *Table) rank(g int64) int64 { return int64(mulmod(uint64(g), t.mul, uint64(t.total))) }

// id is the inverse of rank.
func (t *Table) id(rank int64) int64 { return int64(mulmod(uint64(rank), t.inv, uint64(t.total))) }

// KindOf returns the kind of file g and its rank within the kind.
func (t *Table) KindOf(g int64) (Kind, int64) {
	r := t.rank(g)
	switch {
	case r < t.Live:
		return KindLive, r
	case r < t.Live+t.Tombstones:
		return KindTombstone, r - t.Live
	}
	return KindUntracked, r - t.Live - t.Tombstones
}

// dirs returns the number of data directories (1 when unpartitioned).
func (t *Table) dirs() int64 { return max(1, int64(t.Partitions)) }

// Dir returns the directory key of partition p ("" when unpartitioned).
func (t *Table) Dir(p int) string {
	if t.Partitions == 0 {
		return ""
	}
	return "date=" + t.PartitionValue(p) + "/"
}

// PartitionValue is the value of the partition column of partition p.
func (t *Table) PartitionValue(p int) string {
	return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, p).Format("2006-01-02")
}

// DirFiles is the number of data files in partition p.
func (t *Table) DirFiles(p int) int64 {
	d := t.dirs()
	n := t.total / d
	if int64(p) < t.total%d {
		n++
	}
	return n
}

// Locate returns the partition of file g and its sequence number in that directory.
func (t *Table) Locate(g int64) (p int, j int64) {
	d := t.dirs()
	return int(g % d), g / d
}

// FileID is the inverse of Locate.
func (t *Table) FileID(p int, j int64) int64 { return j*t.dirs() + int64(p) }

func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

func (t *Table) uuidBytes(kind, i uint64) [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], splitmix(t.Seed^kind<<56^i))
	binary.BigEndian.PutUint64(b[8:], splitmix(splitmix(t.Seed^kind<<56^i)^0xA5A5))
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return b
}

const hexDigits = "0123456789abcdef"

func appendUUID(dst []byte, b [16]byte) []byte {
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// AppendName appends the file name (no directory) of data file g, Spark's
// part-NNNNN-<uuid>.c000.snappy.parquet; the sequence number keeps names in id order.
func (t *Table) AppendName(dst []byte, g int64) []byte {
	_, j := t.Locate(g)
	dst = append(dst, "part-"...)
	s := fmt.Appendf(nil, "%0*d", t.width, j)
	dst = append(dst, s...)
	dst = append(dst, '-')
	dst = appendUUID(dst, t.uuidBytes(1, uint64(g)))
	return append(dst, ".c000.snappy.parquet"...)
}

// Key returns the key of data file g relative to the table root.
func (t *Table) Key(g int64) string {
	p, _ := t.Locate(g)
	return string(t.AppendName([]byte(t.Dir(p)), g))
}

// DVFiles is the number of deletion-vector files: live ones are [0, LiveDVFiles), stale ones
// follow.
func (t *Table) DVFiles() int64 { return t.LiveDVFiles() + t.StaleDVFiles() }

// dvUUID returns the UUID of DV file d; its first 8 hex digits are d, so names sort by d.
func (t *Table) dvUUID(d int64) [16]byte {
	b := t.uuidBytes(2, uint64(d))
	binary.BigEndian.PutUint32(b[:4], uint32(d))
	return b
}

// DVKey returns the key of DV file d (at the table root, as Spark writes them).
func (t *Table) DVKey(d int64) string {
	return string(appendUUID([]byte("deletion_vector_"), t.dvUUID(d))) + ".bin"
}

// DVSize is the size of a DV file with DVsPerFile bitmaps (the generated files are empty).
const DVSize = 1 + DVsPerFile*40

const z85Chars = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

func z85(b [16]byte) string {
	var out [20]byte
	for i := 0; i < 4; i++ {
		v := binary.BigEndian.Uint32(b[i*4:])
		for j := 4; j >= 0; j-- {
			out[i*5+j] = z85Chars[v%85]
			v /= 85
		}
	}
	return string(out[:])
}

// dvFor returns the deletion-vector file index and offset of the n-th DV'd action of a kind
// (live DVs use files [0, LiveDVFiles), tombstone DVs the ones after).
func (t *Table) dvDescriptor(d int64, slot int64) (path string, offset int32) {
	return z85(t.dvUUID(d)), int32(1 + slot*40)
}

// Files lists the keys of kind k in name order (for tests and the floor's stale list).
func (t *Table) Files(k Kind, fn func(key string)) {
	for g := int64(0); g < t.total; g++ {
		if kk, _ := t.KindOf(g); kk == k {
			fn(t.Key(g))
		}
	}
}

// StaleKeys calls fn with every key a FULL vacuum with retention 0 deletes.
func (t *Table) StaleKeys(fn func(key string)) {
	for g := int64(0); g < t.total; g++ {
		if k, _ := t.KindOf(g); k != KindLive {
			fn(t.Key(g))
		}
	}
	for d := t.LiveDVFiles(); d < t.DVFiles(); d++ {
		fn(t.DVKey(d))
	}
}

// SaveSpec writes the spec as JSON to path.
func (t *Table) SaveSpec(path string) error {
	b, err := json.MarshalIndent(t.Spec, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// LoadSpec reads a spec written by SaveSpec.
func LoadSpec(path string) (*Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Spec
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return New(s)
}

// SpecPath is where WriteLocal saves the spec of the table in dir: beside it, never inside.
func SpecPath(dir string) string { return strings.TrimSuffix(dir, "/") + ".dvbench.json" }
