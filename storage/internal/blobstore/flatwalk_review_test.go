package blobstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
)

// TestFlatWalkJumpsOnlyFromInsideASkippedFolder: a directory entity without a trailing '/'
// (an Azure folder blob, hdi_isfolder, in a flat namespace) sorts before the names it is a
// prefix of with a byte below '/' after it ("_delta_log-x", "_delta_log.json", and in the
// log "00000000000000000005.json" after a folder "00000000000000000005"). A page that ends
// on such an entity must not start the listing again after the folder's contents: that would
// leave those siblings out of the walk (a commit out of the log's listing).
func TestFlatWalkJumpsOnlyFromInsideASkippedFolder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
		names  []string
	}{
		{"table root", "", []string{"dir:_delta_log", "_delta_log-x", "_delta_log.json", "_delta_log/00000000000000000000.json",
			"_delta_log/00000000000000000001.json", "a.parquet"}},
		{"log", "_delta_log/", []string{"_delta_log/00000000000000000004.json", "dir:_delta_log/00000000000000000005",
			"_delta_log/00000000000000000005.json", "_delta_log/00000000000000000005/x", "_delta_log/00000000000000000006.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for pageSize := 1; pageSize <= 4; pageSize++ {
				for _, order := range []Order{OrderBytes, OrderUTF16} {
					b := newListBackend(order, pageSize, tc.names...)
					b.claimed = OrderBytes | OrderUTF16 // an Azure flat namespace
					pruned := func(d string) bool {
						return tc.prefix != "" || strings.HasPrefix(d, "_") // the log: every folder
					}
					want := theWalk(t, b, "", tc.prefix, pruned, nil)
					for _, conc := range []int{1, 4} {
						got, err := walkAll(t, New(b, Config{Concurrency: conc}), tc.prefix, pruned, nil)
						if err != nil {
							t.Fatalf("page %d, order %b, conc %d: %v", pageSize, order, conc, err)
						}
						if diff := cmp.Diff(want, got); diff != "" {
							t.Fatalf("page %d, order %b, conc %d: walk (-delimited +flat):\n%s", pageSize, order, conc, diff)
						}
					}
				}
			}
		})
	}
}

// TestFlatWalkSplitsAtABoundaryTheFirstRangeIsListingPast: the first range is split while a
// page of it is on its way (the split sees the names listed before that page); a boundary
// inside that page must end the first range there, not leave the page's names past it to be
// listed twice, by both ranges (a file reported twice: the walk failed on its own order).
func TestFlatWalkSplitsAtABoundaryTheFirstRangeIsListingPast(t *testing.T) {
	var names []string
	for i := range 8 * 10 {
		names = append(names, fmt.Sprintf("a/%04d", i))
	}
	names = append(names, "b")
	for i := range 30 {
		names = append(names, fmt.Sprintf("c/%02d", i))
	}
	b := newListBackend(OrderBytes, 10, names...)
	b.delay = 20 * time.Millisecond // the ninth page is still coming when the first level is read
	want := theWalk(t, b, "", "", nil, nil)
	got, err := walkAll(t, New(b, Config{Concurrency: 2}), "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("walk (-delimited +flat):\n%s", diff)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.froms) == 0 {
		t.Fatalf("the listing was not split")
	}
}

// TestListDirFromAName: ListDir reports the entries of one directory at or after a name, in
// byte order, a page at most (the re-check's look at the log: the next version's 20-digit
// name on); a service that ignores the start (Azurite) is found out by the names before it
// and makes this and every later call errors.ErrUnsupported, rather than a listing that
// holds only the first page of the directory.
func TestListDirFromAName(t *testing.T) {
	names := []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json",
		"_delta_log/000000000000000000002.json", // 21 digits: before the 20-digit name of 2
		"_delta_log/00000000000000000002.crc", "_delta_log/00000000000000000002.json", "_delta_log/00000000000000000003.json",
		"_delta_log/2.json", "_delta_log/_sidecars/x.parquet", "_delta_log/_last_checkpoint", "a.parquet"}
	list := func(s *Store, from string) ([]string, bool, error) {
		var got []string
		more, err := s.ListDir(context.Background(), "_delta_log/", from, 0, func(o storage.Object) error {
			got = append(got, o.Key)
			return nil
		})
		return got, more, err
	}
	b := newListBackend(OrderBytes, 4, names...)
	s := New(b, Config{})
	got, more, err := list(s, "00000000000000000002")
	want := []string{"_delta_log/00000000000000000002.crc", "_delta_log/00000000000000000002.json", "_delta_log/00000000000000000003.json", "_delta_log/2.json"}
	if err != nil || !more || !slices.Equal(got, want) {
		t.Fatalf("got %q, more %v, %v; want %q and more", got, more, err, want)
	}
	got, more, err = list(s, "2")
	want = []string{"_delta_log/2.json", "_delta_log/_last_checkpoint", "_delta_log/_sidecars/"}
	if err != nil || more || !slices.Equal(got, want) {
		t.Fatalf("got %q, more %v, %v; want %q", got, more, err, want)
	}

	b = newListBackend(OrderBytes, 4, names...)
	b.from = false // Azurite
	s = New(b, Config{})
	for range 2 {
		if got, _, err := list(s, "00000000000000000002"); !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("a service that ignores the start: got %q, %v; want errors.ErrUnsupported", got, err)
		}
	}

	// A service that does not say it starts listings at a name (an Azure hierarchical
	// namespace, whose start at a name that does not exist is not documented): not asked to.
	b = newListBackend(OrderBytes, 4, names...)
	b.fromUnsaid = true
	s = New(b, Config{})
	if got, _, err := list(s, "00000000000000000002"); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("a service that does not say it starts at a name: got %q, %v; want errors.ErrUnsupported", got, err)
	}
	if len(b.froms) != 0 {
		t.Errorf("listings started at %q", b.froms)
	}
}

// TestFlatWalkJumpsPastOnlyTheSkippedFolder: a listing started again after a skipped folder
// (from "d0", or, on S3, after the name just before it) leaves out the folder's contents
// alone: every name after "d/" in byte order that is not below it ("d0…", a '-' or '.'
// after d, characters above U+007F and U+FFFF) is still walked, as the directory-by-directory
// walk has it, at every page boundary, starting at the name or after the one before it; and
// the names below d/ that S3 hands back between the two (U+10FFFF) are dropped.
func TestFlatWalkJumpsPastOnlyTheSkippedFolder(t *testing.T) {
	names := []string{"_delta_log/00000000000000000000.json", "_delta_log/00000000000000000001.json", "_delta_log/\U0010FFFF",
		"_delta_log/\U0010FFFFz", "_delta_log/\U0010FFFF/x", "_delta_log/_sidecars/a.parquet",
		"_delta_log0/a.parquet", "_delta_log0", "_delta_log-x/_delta_log/00000000000000000000.json", "_delta_log-x/b.parquet",
		"_delta_log.json", "_delta_log\u00e9/c.parquet", "_delta_log\U0001F600/d.parquet", "_delta_log\uE000",
		"a/_x/1", "a/_x/2", "a/_x0", "a/_x-1/e.parquet", "a/_x\x7f", "a/f.parquet"}
	for pageSize := 1; pageSize <= 5; pageSize++ {
		for _, startAfter := range []bool{false, true} {
			b := newListBackend(OrderBytes, pageSize, names...)
			b.startAfter = startAfter
			want := theWalk(t, b, "", "", hidden, nil)
			for _, conc := range []int{1, 4} {
				// A listing started again at the same name for ever ends with the context.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				var got []string
				err := New(b, Config{Concurrency: conc}).WalkPruned(ctx, "", hidden, func(o storage.Object) error {
					got = append(got, fmt.Sprintf("%s %d %s", o.Key, o.Size, o.ModTime.Format(time.TimeOnly)))
					return nil
				})
				cancel()
				if err != nil {
					t.Fatalf("page %d, start after %v, conc %d: %v", pageSize, startAfter, conc, err)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("page %d, start after %v, conc %d: walk (-delimited +flat):\n%s", pageSize, startAfter, conc, diff)
				}
			}
			b.mu.Lock()
			froms := len(b.froms)
			b.mu.Unlock()
			if pageSize == 1 && froms == 0 {
				t.Errorf("page %d: the listing never started again after a skipped folder", pageSize)
			}
		}
	}
}

// TestFlatWalkFailsOnAStartInAnotherOrder: a service that says it lists in byte order but
// lists, and starts listings, in another (here UTF-16's: U+E000 after U+1F600) hands back,
// from a start after a skipped folder, names that sort before the start in byte order but
// were never listed. They are not the names a service that ignores the start repeats (those
// begin with the directory's first name): the walk fails rather than leave them out.
func TestFlatWalkFailsOnAStartInAnotherOrder(t *testing.T) {
	names := []string{"a.parquet", "\U0001F600/_h/1", "\U0001F600/_h/2", "\U0001F600/_h/3", "\U0001F600/b.parquet",
		"\uE000/c.parquet", "\uE000/d.parquet"}
	for pageSize := 1; pageSize <= 3; pageSize++ {
		b := newListBackend(OrderUTF16, pageSize, names...)
		b.claimed = OrderBytes
		got, err := walkAll(t, New(b, Config{Concurrency: 1}), "", hidden, nil)
		var oe *OrderError
		if !errors.As(err, &oe) && !slices.Contains(got, "\uE000/c.parquet 11 03:04:10") {
			t.Fatalf("page %d: walked %q, %v; want the names after the start reported, or an OrderError", pageSize, got, err)
		}
	}
}
