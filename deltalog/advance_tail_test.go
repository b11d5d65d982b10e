package deltalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// listCounter counts the entries of _delta_log/ the listings of a store deliver (a whole
// listing through Walk, a listing from a name through ListDir, page limited to page entries
// when page > 0) and the Stats of log files.
type listCounter struct {
	storage.Store
	lister storage.DirLister
	page   int
	mu     sync.Mutex
	listed int
	stats  []string
}

func (c *listCounter) count(n int, stat string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listed += n
	if stat != "" {
		c.stats = append(c.stats, stat)
	}
}

func (c *listCounter) Walk(ctx context.Context, prefix string, fn func(storage.Object) error) error {
	return c.Store.Walk(ctx, prefix, func(o storage.Object) error {
		if strings.HasPrefix(o.Key, LogDir) {
			c.count(1, "")
		}
		return fn(o)
	})
}

func (c *listCounter) ListDir(ctx context.Context, dir, from string, limit int, fn func(storage.Object) error) (bool, error) {
	if c.page > 0 && (limit <= 0 || limit > c.page) {
		limit = c.page
	}
	return c.lister.ListDir(ctx, dir, from, limit, func(o storage.Object) error {
		c.count(1, "")
		return fn(o)
	})
}

func (c *listCounter) Stat(ctx context.Context, key string) (storage.Object, error) {
	if strings.HasPrefix(key, LogDir) {
		c.count(0, key)
	}
	return c.Store.Stat(ctx, key)
}

func emptyCommit(*Snapshot) (*CommitRequest, error) {
	return &CommitRequest{Operation: "VACUUM START"}, nil
}

// TestCommitAfterListsTheTailOnly (issue 37, item 2): committing after a snapshot of a long
// log (990 commits) lists the log from the snapshot's version on, not whole again: where the
// store lists from a name (100 entries a page here), one page from version 989's 21-digit
// name (which the older versions' 20-digit names follow: all those of three digits), then
// the listing from its 20-digit name and a Stat of version 990's 21-digit name; not the 990
// entries the whole listing delivers. The snapshot it returns is the one the log now loads.
func TestCommitAfterListsTheTailOnly(t *testing.T) {
	ctx := context.Background()
	st := mem.New("mem://b/t")
	commitAt(t, st, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("a"))
	for v := int64(1); v < 990; v++ {
		commitAt(t, st, v, addOf(fmt.Sprintf("f%d", v)))
	}
	base, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	c := &listCounter{Store: st, lister: st, page: 100}
	got, err := CommitAfter(ctx, c, base, emptyCommit, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 990 {
		t.Fatalf("committed version %d, want 990", got.Version)
	}
	if c.listed > 101 || fmt.Sprint(c.stats) != fmt.Sprintf("[%s%021d.json]", LogDir, 990) {
		t.Errorf("committing after version 989 listed %d entries of the log and asked for %q; want at most 101 (a page, and version 989's commit), not the whole log, and the 21-digit name of version 990", c.listed, c.stats)
	}
	want, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if got.Snapshot.Version != want.Version || fmt.Sprint(fileSet(t, got.Snapshot, st)) != fmt.Sprint(fileSet(t, want, st)) {
		t.Errorf("the snapshot after the commit is at version %d, want %d with the same files", got.Snapshot.Version, want.Version)
	}

	// A second commit (VACUUM END) after the snapshot the first returned, which holds the
	// commit as written (no modification time): also from version 990 on, not whole.
	c2 := &listCounter{Store: st, lister: st, page: 100}
	end, err := CommitAfter(ctx, c2, got.Snapshot, emptyCommit, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if end.Version != 991 || c2.listed > 101 {
		t.Errorf("the second commit: version %d, %d entries of the log listed; want 991 and at most 101", end.Version, c2.listed)
	}
}

// TestCommitAfterRefusesOtherSpellings (issue 37, item 2): a commit file written since the
// snapshot under another name Spark reads as a version (21 digits, unpadded) is refused by the
// listing from the snapshot's version as the whole listing refused it, and nothing is
// written; also where the first page does not reach the 20-digit names (one entry a page
// here), the 21-digit name then asked for.
func TestCommitAfterRefusesOtherSpellings(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  string
		page int
	}{
		{"21 digits of the next version", fmt.Sprintf("%s%021d.json", LogDir, 11), 0},
		{"21 digits beside a commit made since", fmt.Sprintf("%s%021d.json", LogDir, 11), 0},
		// 00000000000000000002.json sorts between 000000000000000000010.json and
		// 000000000000000000021.json: the first page (one entry) does not reach the latter.
		{"21 digits after commits made since, a wide page", fmt.Sprintf("%s%021d.json", LogDir, 21), 1},
		{"unpadded", LogDir + "11.json", 0},
		{"unpadded, a wide page", LogDir + "11.json", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := mem.New("mem://b/t")
			commitAt(t, st, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("a"))
			for v := int64(1); v <= 10; v++ {
				commitAt(t, st, v, addOf(fmt.Sprintf("f%d", v)))
			}
			base, err := Load(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			since := int64(10)
			switch {
			case strings.Contains(tc.name, "beside"):
				since = 11
			case strings.Contains(tc.name, "after commits"):
				since = 20
			}
			for v := int64(11); v <= since; v++ {
				commitAt(t, st, v, addOf(fmt.Sprintf("g%d", v)))
			}
			if err := st.Put(ctx, tc.key, []byte(`{"add":{"path":"a","size":1,"modificationTime":0,"dataChange":true,"partitionValues":{}}}`+"\n")); err != nil {
				t.Fatal(err)
			}
			c := &listCounter{Store: st, lister: st, page: tc.page}
			_, err = CommitAfter(ctx, c, base, emptyCommit, CommitOptions{})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), storage.Base(tc.key)) {
				t.Fatalf("got %v, want the commit file %s refused", err, tc.key)
			}
			if _, err := st.Stat(ctx, CommitKey(since+1)); err == nil {
				t.Errorf("version %d was written", since+1)
			}
			if tc.page > 0 && strings.HasPrefix(tc.name, "21") && len(c.stats) == 0 {
				t.Errorf("no Stat of the 21-digit name where the page did not reach it")
			}
		})
	}
}
