package deltalog

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FileKind is the closed set of kinds a file in _delta_log/ can have.
type FileKind int

// The kinds of log files.
const (
	KindUnknownFile         FileKind = iota
	KindCommit                       // N.json
	KindClassicCheckpoint            // N.checkpoint.parquet (may hold a V2 checkpoint)
	KindMultiPartCheckpoint          // N.checkpoint.P.T.parquet
	KindUUIDCheckpoint               // N.checkpoint.<uuid>.json|parquet (V2)
	KindCompaction                   // X.Y.compacted.json
	KindChecksum                     // N.crc
	KindLastCheckpoint               // _last_checkpoint
)

// LogFile is a parsed file name of the log directory.
type LogFile struct {
	Key     string // relative to the table root: _delta_log/...
	Kind    FileKind
	Version int64 // the commit or checkpoint version; the start for a compaction
	// EndVersion is the last version of a compaction file.
	EndVersion int64
	// Part and Parts number the parts of a multi-part checkpoint (1-based).
	Part, Parts int
	// Format is "json" or "parquet" for checkpoints.
	Format  string
	Size    int64
	ModTime time.Time
}

// parseVersion reads a version as Spark's \d+ does: any number of digits, leading zeros
// included (000000000000000000002 is version 2 too, and then a second claim on it beside the
// padded name: ListLog refuses that).
func parseVersion(s string) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	if t := strings.TrimLeft(s, "0"); t == "" {
		s = "0"
	} else {
		s = t
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// IsUUID reports whether s is a UUID in its canonical 8-4-4-4-12 hexadecimal form (the
// names of V2 checkpoints; Iceberg's table-uuid and metadata file names).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ParseLogName classifies a file name found directly in _delta_log/.
func ParseLogName(name string) LogFile {
	lf := LogFile{Kind: KindUnknownFile}
	if name == "_last_checkpoint" {
		lf.Kind = KindLastCheckpoint
		return lf
	}
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return lf
	}
	v, ok := parseVersion(parts[0])
	if !ok {
		return lf
	}
	lf.Version = v
	switch {
	case len(parts) == 2 && parts[1] == "json":
		lf.Kind = KindCommit
	case len(parts) == 2 && parts[1] == "crc":
		lf.Kind = KindChecksum
	case len(parts) == 3 && parts[1] == "checkpoint" && parts[2] == "parquet":
		lf.Kind, lf.Format = KindClassicCheckpoint, "parquet"
	case len(parts) == 4 && parts[1] == "checkpoint" && IsUUID(parts[2]) && (parts[3] == "json" || parts[3] == "parquet"):
		lf.Kind, lf.Format = KindUUIDCheckpoint, parts[3]
	case len(parts) == 5 && parts[1] == "checkpoint" && parts[4] == "parquet":
		p, ok1 := parseVersion(parts[2])
		t, ok2 := parseVersion(parts[3])
		if ok1 && ok2 && p >= 1 && p <= t {
			lf.Kind, lf.Format = KindMultiPartCheckpoint, "parquet"
			lf.Part, lf.Parts = int(p), int(t)
		}
	case len(parts) == 4 && parts[2] == "compacted" && parts[3] == "json":
		if e, ok := parseVersion(parts[1]); ok && e >= v {
			lf.Kind, lf.EndVersion = KindCompaction, e
		}
	}
	return lf
}

// CommitKey returns the key of commit version v.
func CommitKey(v int64) string { return LogDir + commitName(v) }

// commitName is the name every writer gives commit version v: its version in 20 digits.
func commitName(v int64) string { return fmt.Sprintf("%020d.json", v) }

// UnpaddedCommitKey returns the key of commit version v named by its version without leading
// zeros (7.json), a spelling Spark reads as that version and deltavacuum refuses; the re-check
// during a run looks for it too.
func UnpaddedCommitKey(v int64) string { return fmt.Sprintf("%s%d.json", LogDir, v) }

// Padded21CommitKey returns the key of commit version v named by its version in 21 digits,
// another spelling Spark reads as that version and deltavacuum refuses; it sorts before the
// 20-digit names, so a listing from the 20-digit name does not see it.
func Padded21CommitKey(v int64) string { return fmt.Sprintf("%s%021d.json", LogDir, v) }

// LogDir is the key of the log directory.
const LogDir = "_delta_log/"

// TailStart is where a listing of _delta_log/ that must see commit v and every commit after it,
// under every spelling Spark reads but 22 digits and more, starts (storage.DirLister): at v's
// 21-digit name, which sorts before the 20-digit names (version 0's 21 zeros sort after its
// 20, so it starts there at the 20-digit name); and from20, v's 20-digit name, where it starts
// again when older versions' files, named between the two spellings, fill the first page.
// Snapshot.AdvanceTail (listTail) and the re-check before each batch (package vacuum) both
// list from it.
func TailStart(v int64) (start, from20 string) {
	from20 = commitName(v)[:20]
	if v == 0 {
		return from20, from20
	}
	return "0" + from20, from20
}
