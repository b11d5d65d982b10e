package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/deltavacuum/deltavacuum/storage"
)

// maxHintBytes bounds version-hint.text: Iceberg writes a number or a file name there.
const maxHintBytes = 4096

// scan holds what the metadata folders hold.
type scan struct {
	store    storage.Store
	limit    int64
	dirs     map[string]bool
	seen     map[string]bool
	cands    []*candidate
	hints    []string
	notes    []string
	hintInfo *Hint
}

// listDir lists the entries directly in dir where the store lists one directory
// (storage.DirLister): a folder that is missing or holds no Iceberg metadata, as on most
// Delta tables, then costs one request, where a walk may also ask whether the folder exists.
// It reports false, having called fn for nothing, where the store cannot (or cannot go on
// to a next page: the caller walks the folder instead).
func (s *scan) listDir(ctx context.Context, dir string, fn func(storage.Object)) (bool, error) {
	dl, ok := s.store.(storage.DirLister)
	if !ok {
		return false, nil
	}
	var got []storage.Object
	from := ""
	for {
		last := ""
		more, err := dl.ListDir(ctx, dir, from, 0, func(o storage.Object) error {
			got = append(got, o)
			last = o.Name()
			return nil
		})
		if errors.Is(err, errors.ErrUnsupported) {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		if !more || last == "" {
			break
		}
		from = last + "\x00" // the first name after last
	}
	for _, o := range got {
		fn(o)
	}
	return true, nil
}

// readDir reads the metadata files directly in dir (not in its subfolders).
func (s *scan) readDir(ctx context.Context, dir string) error {
	if s.dirs == nil {
		s.dirs = map[string]bool{}
	}
	s.dirs[dir] = true
	if !storage.ValidKey(dir) {
		return fmt.Errorf("%w: metadata folder %q is not a clean key inside the table", ErrUnreadable, dir)
	}
	var objs []storage.Object
	keep := func(o storage.Object) {
		name := o.Name()
		if name == VersionHintName {
			objs = append(objs, o)
			return
		}
		if _, _, _, ok := parseName(name); ok {
			objs = append(objs, o)
		}
	}
	listed, err := s.listDir(ctx, dir, func(o storage.Object) {
		if !o.IsDir {
			keep(o)
		}
	})
	if !listed && err == nil {
		objs = objs[:0]
		err = s.store.Walk(ctx, dir, func(o storage.Object) error {
			if o.IsDir {
				if o.Key == dir {
					return nil
				}
				return storage.SkipDir
			}
			keep(o)
			return nil
		})
	}
	if errors.Is(err, storage.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing Iceberg metadata folder %s: %w", dir, err)
	}
	for _, o := range objs {
		if s.seen[o.Key] {
			continue
		}
		s.seen[o.Key] = true
		if o.Name() == VersionHintName {
			if !o.IsLink {
				s.hints = append(s.hints, o.Key)
			} else {
				s.notes = append(s.notes, o.Key+" is a symbolic link: not read")
			}
			continue
		}
		kind, version, _, _ := parseName(o.Name())
		c := &candidate{key: o.Key, kind: kind, version: version}
		switch {
		case o.IsLink:
			c.reason = "a symbolic link (never followed)"
		case o.Size > s.limit:
			c.reason = fmt.Sprintf("%d bytes, more than the limit of %d (Options.MaxMetadataBytes)", o.Size, s.limit)
		default:
			data, err := readBounded(ctx, s.store, o.Key, s.limit)
			switch {
			case errors.Is(err, errTooLarge):
				c.reason = fmt.Sprintf("more than the limit of %d bytes (Options.MaxMetadataBytes)", s.limit)
			case errors.Is(err, storage.ErrNotExist):
				c.reason = "gone since it was listed"
			case errors.Is(err, storage.ErrSymlink), errors.Is(err, storage.ErrNotRegular):
				c.reason = err.Error()
			case err != nil:
				return fmt.Errorf("reading Iceberg metadata file %s: %w", o.Key, err)
			default:
				if c.meta, err = decodeMetadata(data, s.limit); err != nil {
					c.reason = err.Error()
				}
			}
		}
		s.cands = append(s.cands, c)
	}
	return nil
}

func (s *scan) anyIceberg() bool {
	for _, c := range s.cands {
		if c.meta != nil {
			return true
		}
	}
	return false
}

func (s *scan) ignored() []Ignored {
	var out []Ignored
	for _, c := range s.cands {
		if c.meta == nil {
			out = append(out, Ignored{Key: c.key, Reason: c.reason})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// choose picks the current metadata file (see the package documentation).
func (s *scan) choose(ctx context.Context) (*candidate, error) {
	s.hintInfo = nil
	var best *candidate
	for _, h := range s.hints {
		c, info, err := s.fromHint(ctx, h)
		if err != nil {
			return nil, err
		}
		if c == nil {
			if s.hintInfo == nil {
				s.hintInfo = info
			}
			continue
		}
		if best == nil || c.version > best.version {
			best, s.hintInfo = c, info
		}
	}
	top, err := s.newest()
	if err != nil {
		return nil, err
	}
	if best != nil {
		if top != nil && top != best && top.version > best.version {
			s.hintInfo.Note = fmt.Sprintf("%s has a higher version than the chain of versions from the hint; Iceberg's readers of this table (Java's HadoopTableOperations) read %s", top.key, best.key)
		}
		return best, nil
	}
	if top == nil {
		return nil, fmt.Errorf("%w: no Iceberg metadata file can be chosen as current", ErrUnreadable)
	}
	return top, nil
}

// newest is the choice by name: the highest version, or when no name has one, the latest
// last-updated-ms.
func (s *scan) newest() (*candidate, error) {
	var top []*candidate
	versioned := false
	for _, c := range s.cands {
		if c.kind != NameOther && c.version >= 0 {
			if !versioned || c.version > top[0].version {
				top, versioned = []*candidate{c}, true
			} else if c.version == top[0].version {
				top = append(top, c)
			}
		}
	}
	if !versioned {
		for _, c := range s.cands {
			if c.meta != nil {
				top = append(top, c)
			}
		}
	}
	var valid []*candidate
	for _, c := range top {
		if c.meta == nil {
			return nil, fmt.Errorf("%w: %s, the newest metadata file by its name, is not Iceberg metadata (%s): Iceberg readers cannot read this table either; repair or remove it, then run again", ErrUnreadable, c.key, c.reason)
		}
		valid = append(valid, c)
	}
	if len(valid) == 0 {
		return nil, nil
	}
	sort.SliceStable(valid, func(i, j int) bool {
		if a, b := *valid[i].meta.LastUpdatedMs, *valid[j].meta.LastUpdatedMs; a != b {
			return a > b
		}
		return valid[i].key < valid[j].key
	})
	if len(valid) > 1 {
		a, b := valid[0], valid[1]
		if *a.meta.LastUpdatedMs == *b.meta.LastUpdatedMs && !sameState(a.meta, b.meta) {
			return nil, fmt.Errorf("%w: %s and %s have the same version and time but describe different tables or snapshots: which one is current cannot be told; remove the one that is not, then run again", ErrUnreadable, a.key, b.key)
		}
	}
	return valid[0], nil
}

func sameState(a, b *tableMetadata) bool {
	eq := func(x, y *int64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	eqs := func(x, y *string) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return eqs(a.TableUUID, b.TableUUID) && eq(a.CurrentSnapshotID, b.CurrentSnapshotID)
}

// fromHint reads one version-hint.text. It returns a nil candidate when the hint is to be
// ignored (info says why), an error when it names a file that cannot be read.
func (s *scan) fromHint(ctx context.Context, key string) (*candidate, *Hint, error) {
	dir := storage.Dir(key)
	info := &Hint{Key: key}
	data, err := readBounded(ctx, s.store, key, maxHintBytes)
	if err != nil {
		info.Note = "not read: " + err.Error()
		return nil, info, nil
	}
	content := strings.TrimSpace(string(data))
	info.Content = content
	if !utf8.ValidString(content) {
		info.Note = "not valid UTF-8: ignored, as Iceberg's Java reader ignores a hint it cannot parse"
		return nil, info, nil
	}
	find := func(name string) *candidate {
		for _, c := range s.cands {
			if c.key == dir+name {
				return c
			}
		}
		return nil
	}
	if n, ok := parseVersion(content); ok {
		c := find("v" + strconv.FormatInt(n, 10) + metadataSuffix)
		if c == nil {
			c = find("v" + strconv.FormatInt(n, 10) + ".gz" + metadataSuffix)
		}
		if c == nil {
			return nil, nil, fmt.Errorf("%w: %s names version %d but %sv%d%s is missing: Iceberg readers of this table fail the same way; restore the file or correct the hint, then run again", ErrUnreadable, key, n, dir, n, metadataSuffix)
		}
		if c.meta == nil {
			return nil, nil, fmt.Errorf("%w: %s names %s, which is not Iceberg metadata (%s); repair it or correct the hint, then run again", ErrUnreadable, key, c.key, c.reason)
		}
		// Newer consecutive versions: written before the hint, by a writer that had not
		// yet moved the hint (Java reads forward the same way).
		for {
			next := find("v" + strconv.FormatInt(c.version+1, 10) + metadataSuffix)
			if next == nil {
				next = find("v" + strconv.FormatInt(c.version+1, 10) + ".gz" + metadataSuffix)
			}
			if next == nil {
				break
			}
			if next.meta == nil {
				return nil, nil, fmt.Errorf("%w: %s follows the version the hint %s names and is not Iceberg metadata (%s); repair or remove it, then run again", ErrUnreadable, next.key, key, next.reason)
			}
			info.Note = fmt.Sprintf("newer than the hint: %s", next.key)
			c = next
		}
		info.Used = true
		return c, info, nil
	}
	if content == "" || strings.ContainsAny(content, "/\\") || content == "." || content == ".." || strings.ContainsFunc(content, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		info.Note = "neither a version nor a file name: ignored, as Iceberg's Java reader ignores a hint it cannot parse"
		return nil, info, nil
	}
	explicit := strings.HasSuffix(content, metadataSuffix)
	name := content
	if !explicit {
		name += metadataSuffix
	}
	c := find(name)
	switch {
	case c == nil && explicit:
		return nil, nil, fmt.Errorf("%w: %s names %s%s, which is missing; restore it or correct the hint, then run again", ErrUnreadable, key, dir, name)
	case c == nil:
		info.Note = fmt.Sprintf("names %s%s, which is missing: ignored, as Iceberg's Java reader ignores a hint that is not a number", dir, name)
		return nil, info, nil
	case c.meta == nil:
		return nil, nil, fmt.Errorf("%w: %s names %s, which is not Iceberg metadata (%s); repair it or correct the hint, then run again", ErrUnreadable, key, c.key, c.reason)
	}
	info.Used = true
	return c, info, nil
}

// errTooLarge is the cause of a file over its limit.
var errTooLarge = errors.New("larger than the limit")

// readBounded reads a whole object of at most limit bytes, without trusting the size the
// store reports for the allocation.
func readBounded(ctx context.Context, store storage.Store, key string, limit int64) ([]byte, error) {
	r, err := store.Open(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if r.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes: %w of %d", key, r.Size(), errTooLarge, limit)
	}
	data, err := io.ReadAll(io.LimitReader(io.NewSectionReader(r, 0, limit+1), limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w of %d", key, errTooLarge, limit)
	}
	return data, nil
}
