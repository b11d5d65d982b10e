package vacuum

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/deltavacuum/deltavacuum/deltalog"
	"github.com/deltavacuum/deltavacuum/storage"
)

// DefaultTrash is the trash folder of --trash given without a folder.
const DefaultTrash = "_deltavacuum/trash/"

// RunsDir is the folder of the run records, relative to the table root: never a trash.
const RunsDir = "_deltavacuum/runs/"

// ErrTrashFolder is matched (errors.Is) by every refusal of a trash folder.
var ErrTrashFolder = errors.New("not a folder that may hold a trash")

// TrashFolder is the one rule that decides whether a folder of the table may hold a trash (the
// files a run moves instead of deleting them): every path that moves files into a trash, out of
// it, or deletes from it (vacuum --trash, undo, trash purge, the service's purge) calls it, and
// a record that names another trash is not used. It returns the clean form of prefix (relative
// to the table root, ending in '/').
//
// The folder must be a clean key, neither in the Delta log nor holding or inside the runs
// folder, and its first name must be hidden: VACUUM never descends into it, so that it never
// deletes a trashed file as untracked, and nothing the log references lies in it. With snap
// (the table's latest snapshot) hidden is by the table's own rule (a name starting with '_' or
// '.', but not _change_data*, _delta_index* or a partition folder `<column>=` of that table);
// with snap nil only the form is checked (the command line, before the table is opened). Either
// way the name starts with '_' or '.' (UniForm's metadata folder, hidden on such tables, is
// Iceberg's, not a trash).
func TrashFolder(snap *deltalog.Snapshot, prefix string) (string, error) {
	dir := strings.TrimSuffix(strings.TrimPrefix(prefix, "./"), "/") + "/"
	if err := checkTrashFolder(snap, dir); err != nil {
		return "", fmt.Errorf("--trash %q: %w: %w; give a folder of the table whose name starts with '_', such as %s", prefix, ErrTrashFolder, err, DefaultTrash)
	}
	return dir, nil
}

func checkTrashFolder(snap *deltalog.Snapshot, dir string) error {
	if dir == "/" || !strings.HasSuffix(dir, "/") || !storage.ValidKey(dir) {
		return errors.New("it is not a clean folder of the table")
	}
	// A control character (a newline, a tab, DEL, C1) is no part of a folder anyone means: a
	// name that holds one is taken for a typing slip, refused, never made nor looked for.
	if !utf8.ValidString(dir) {
		return errors.New("it is not valid UTF-8")
	}
	for _, r := range dir {
		if unicode.IsControl(r) {
			return fmt.Errorf("it holds the control character %U", r)
		}
	}
	if strings.ContainsAny(dir, `\:`) && runtime.GOOS == "windows" {
		return errors.New("it holds a character Windows reads as a separator or a drive")
	}
	lower := strings.ToLower(dir) // case-insensitive file systems (macOS, Windows)
	if strings.HasPrefix(lower, "_delta_log/") {
		return errors.New("it lies in the Delta log")
	}
	if strings.HasPrefix(lower, RunsDir) || strings.HasPrefix(RunsDir, lower) {
		return fmt.Errorf("it holds or lies in the runs folder %s", RunsDir)
	}
	first, _, _ := strings.Cut(dir, "/")
	if !(hiddenRule{}).hidden(first) {
		return fmt.Errorf("%s is not hidden (its name must start with '_' or '.', and not be _change_data or _delta_index, which VACUUM cleans)", first)
	}
	if snap != nil && !hiddenRuleOf(snap).hidden(first) {
		return fmt.Errorf("VACUUM of %s does not take %s for hidden (a partition column of that name): it would delete what is moved there, and undo would move files of the table", snap.Location, first)
	}
	return nil
}

// CheckTrashPlace refuses a trash folder (a run's, ending in '/') when one of the names on its
// way exists in the store and is not a folder (a regular file, or a symbolic link): nothing
// could be moved there, and a move that fails on the way must never be taken for a file gone.
// It is checked before anything is moved.
func CheckTrashPlace(ctx context.Context, store storage.Store, dir string) error {
	key := ""
	for _, name := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		key += name
		o, err := store.Stat(ctx, key)
		switch {
		case errors.Is(err, storage.ErrNotExist):
			// Made by the move. (On an object store a key below may still exist.)
		case err == nil && (o.IsLink || !o.IsDir):
			return fmt.Errorf("%s: the trash folder %s cannot be made: %s is a file, not a folder; nothing was moved (move that file away, or choose another --trash)",
				store.Location(), dir, key)
		case err != nil && !errors.Is(err, storage.ErrNotExist):
			return fmt.Errorf("%s: checking the trash folder %s: %w; nothing was moved", store.Location(), dir, err)
		}
		key += "/"
	}
	return nil
}

// RunTrash returns the folder a run moves its files into: the trash folder, then its id.
func RunTrash(trash, id string) string { return trash + id + "/" }

// ReferencedUnder returns the keys below prefix (a folder key, ending in '/') that an action of
// snap names: a live add, a tombstone of any age, their deletion vectors, every reading of
// their paths. Nothing under a trash folder should be (it is hidden), but a purge of the trash
// deletes none of them whatever the records say: what the log names is never deleted there.
func ReferencedUnder(ctx context.Context, store storage.Store, snap *deltalog.Snapshot, prefix string) (map[string]bool, error) {
	out := map[string]bool{}
	under := func(key string) {
		if key != "" && strings.HasPrefix(key, prefix) {
			out[key] = true
		}
	}
	err := snap.FileKeys(ctx, store, func(f deltalog.File) error {
		under(f.Key)
		under(f.DVKey)
		for _, k := range f.OtherKeys {
			under(k)
		}
		return nil
	})
	return out, err
}
