package vacuum

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// digestPrefix names the form of a plan digest; a digest of another form is refused, not
// compared (a digest is never guessed at).
const digestPrefix = "plan1-"

// Digest identifies what a plan deletes: the table, the snapshot version it was made from,
// its mode and retention, and every file (path, size, modification time, checksum companion)
// and directory, sorted, and the trash it moves them into, if any. Two plans with the same digest delete the same objects; a commit, a
// file added, removed or rewritten, another retention or mode all change it. The clock is not
// in it: a plan made later that deletes the same files has the same digest.
//
// A plan whose temporary file (FileList) no longer reads back has no digest: Digest then
// returns a string that is not one (ValidDigest is false, CheckDigest refuses it), naming the
// error.
func Digest(p *Plan) string {
	d, err := digestOf(p)
	if err != nil {
		return "unreadable plan: " + err.Error()
	}
	return d
}

func digestOf(p *Plan) (string, error) {
	h := sha256.New()
	// Each field is written with its length first, so no path (which may hold any byte, a
	// newline or a NUL included) can pass for two fields or two files.
	field := func(f string) {
		var n [binary.MaxVarintLen64]byte
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(f)))])
		h.Write([]byte(f))
	}
	for _, f := range []string{"deltavacuum plan digest 1", p.Table, strconv.FormatInt(p.Version, 10), string(planMode(p.Mode)),
		strconv.FormatFloat(p.RetentionHours, 'g', -1, 64), strconv.Itoa(p.Files.Len()), strconv.Itoa(len(p.Dirs))} {
		field(f)
	}
	if p.Shard != nil {
		field("shard " + p.Shard.String()) // unsharded digests stay as they were
	}
	err := p.Files.Sorted(func(f File) error {
		field(f.Path)
		field(strconv.FormatInt(f.Size, 10))
		field(strconv.FormatInt(modMillis(f), 10))
		field(f.Checksum)
		return nil
	})
	if err != nil {
		return "", err
	}
	dirs := make([]string, len(p.Dirs))
	for i, d := range p.Dirs {
		dirs[i] = d.Path
	}
	slices.Sort(dirs)
	for _, d := range dirs {
		field(d)
	}
	if p.Trash != "" {
		// After the counted lists, so a plan without trash keeps its digest and none can
		// pass for the other.
		field("trash")
		field(p.Trash)
	}
	return digestPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

func planMode(m Mode) Mode {
	if m == "" {
		return ModeFull
	}
	return m
}

func modMillis(f File) int64 {
	if f.ModificationTime.IsZero() {
		return 0
	}
	return f.ModificationTime.UnixMilli()
}

// ErrPlanChanged is returned (wrapped in a *PlanChangedError) when a run's new plan is not the
// plan it was asked to execute: nothing was deleted and nothing was committed.
var ErrPlanChanged = errors.New("the plan changed since it was previewed")

// PlanChangedError is the refusal of a run whose plan differs from the expected one.
type PlanChangedError struct {
	Table string
	// Expected is the digest the run was asked to execute; Got the digest of its new plan.
	Expected, Got string
	// Version, NumFiles and Bytes are the new plan's.
	Version  int64
	NumFiles int64
	Bytes    int64
}

func (e *PlanChangedError) Error() string {
	return fmt.Sprintf("%s: %v: the table or the plan moved (now version %d, %d files, %d bytes to delete); nothing was deleted: preview again and run the new plan",
		e.Table, ErrPlanChanged, e.Version, e.NumFiles, e.Bytes)
}

func (e *PlanChangedError) Unwrap() error { return ErrPlanChanged }

// ValidDigest reports whether s has the form of a digest Digest returns.
func ValidDigest(s string) bool {
	hexPart, ok := strings.CutPrefix(s, digestPrefix)
	if !ok || len(hexPart) != 2*sha256.Size {
		return false
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckDigest returns nil when plan's digest is want, a *PlanChangedError otherwise; a want
// that is not a digest is an error too (never taken for "no expectation").
func CheckDigest(plan *Plan, want string) error {
	if !ValidDigest(want) {
		return fmt.Errorf("%s: %q is not a plan digest (it starts with %q and has 64 hex digits): preview the table to get one", plan.Table, want, digestPrefix)
	}
	got, err := digestOf(plan)
	if err != nil {
		return err
	}
	if got == want {
		return nil
	}
	return &PlanChangedError{Table: plan.Table, Expected: want, Got: got, Version: plan.Version, NumFiles: plan.NumFilesToDelete, Bytes: plan.SizeOfDataToDelete}
}
