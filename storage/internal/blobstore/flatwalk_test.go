package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
)

// lister is a backend over a set of names that lists in a given order, honouring From and
// To or not, and counts its requests: the service a flat walk is tested against.
type listBackend struct {
	mu         sync.Mutex
	names      map[string]Entry
	order      Order // the order its listings come in (one bit)
	from, to   bool  // whether it honours ListOptions.From and To
	startAfter bool  // with from: it starts after Before(From), as S3's StartAfter does
	fromUnsaid bool  // FlatListing does not say From, whatever the service does
	claimed    Order // the orders FlatListing says (default: order)
	pageSize   int
	flatOff    bool          // FlatListing says the backend cannot walk flat
	delay      time.Duration // before each page of a listing without a delimiter

	lists, delimited, probes int // list requests: flat pages, delimited pages, single-name pages
	froms                    []string
	cache                    []string // every name, in order
}

func newListBackend(order Order, pageSize int, names ...string) *listBackend {
	b := &listBackend{names: map[string]Entry{}, order: order, from: true, to: false, pageSize: pageSize}
	for _, n := range names {
		b.add(n)
	}
	return b
}

func (b *listBackend) add(name string) {
	t := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(len(b.names)) * time.Second)
	if strings.HasPrefix(name, "dir:") {
		name = name[len("dir:"):]
		b.names[name] = Entry{Name: name, Dir: true, ModTime: t}
		b.cache = nil
		return
	}
	b.cache = nil
	b.names[name] = Entry{Name: name, Size: int64(len(name)), ModTime: t}
}

func (b *listBackend) FlatListing(context.Context, bool) FlatListing {
	if b.flatOff {
		return FlatListing{}
	}
	c := b.claimed
	if c == 0 {
		c = b.order
	}
	return FlatListing{Orders: c, From: b.from && !b.fromUnsaid, To: b.to, PageSize: b.pageSize}
}

func (b *listBackend) sorted(names []string) {
	sort.Slice(names, func(i, j int) bool { return compareIn(b.order, names[i], names[j]) < 0 })
}

// all returns every name in the backend's order (kept until a name is added).
func (b *listBackend) all() []string {
	if b.cache == nil {
		for n := range b.names {
			b.cache = append(b.cache, n)
		}
		b.sorted(b.cache)
	}
	return b.cache
}

func (b *listBackend) List(ctx context.Context, prefix string, o ListOptions, fn func(Page) error) error {
	b.mu.Lock()
	all := b.all()
	// The names with a prefix are together in every order: from the first of them on.
	i := sort.Search(len(all), func(i int) bool {
		return strings.HasPrefix(all[i], prefix) || compareIn(b.order, all[i], prefix) > 0
	})
	if o.From != "" && b.from && b.startAfter {
		after := Before(o.From)
		i = max(i, sort.Search(len(all), func(i int) bool { return compareIn(b.order, all[i], after) > 0 }))
	} else if o.From != "" && b.from {
		i = max(i, sort.Search(len(all), func(i int) bool { return compareIn(b.order, all[i], o.From) >= 0 }))
	}
	if o.Delim {
		b.delimited++
	} else if o.Limit == 1 {
		b.probes++
	}
	if o.From != "" {
		b.froms = append(b.froms, o.From)
	}
	if !o.Delim {
		// Page by page, as a service does: nothing past the page is looked at.
		b.mu.Unlock()
		size := b.pageSize
		if o.Limit > 0 && o.Limit < size {
			size = o.Limit
		}
		first := true
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			var p Page
			b.mu.Lock()
			for ; i < len(all) && strings.HasPrefix(all[i], prefix) && len(p.Entries) < size; i++ {
				if o.To != "" && b.to && compareIn(b.order, all[i], o.To) >= 0 {
					i = len(all)
					break
				}
				p.Entries = append(p.Entries, b.names[all[i]])
			}
			p.Truncated = i < len(all) && strings.HasPrefix(all[i], prefix) && !(o.To != "" && b.to && compareIn(b.order, all[i], o.To) >= 0)
			if o.Limit != 1 {
				b.lists++
			}
			b.mu.Unlock()
			if o.Limit != 1 {
				time.Sleep(b.delay)
			}
			if len(p.Entries) == 0 && !first {
				return nil
			}
			first = false
			if err := fn(p); err != nil {
				return err
			}
			if !p.Truncated {
				return nil
			}
		}
	}
	var names []string
	entries := map[string]Entry{}
	for ; i < len(all) && strings.HasPrefix(all[i], prefix); i++ {
		n := all[i]
		if o.To != "" && b.to && compareIn(b.order, n, o.To) >= 0 {
			break
		}
		if o.Delim {
			if j := strings.IndexByte(n[len(prefix):], '/'); j >= 0 {
				p := n[:len(prefix)+j+1]
				if _, ok := entries[p]; !ok {
					entries[p] = Entry{Name: p, Dir: true} // a common prefix
					names = append(names, p)
				}
				continue
			}
		}
		entries[n] = b.names[n]
		names = append(names, n)
	}
	b.mu.Unlock()
	b.sorted(names) // the common prefixes among the names
	size := b.pageSize
	if o.Limit > 0 && o.Limit < size {
		size = o.Limit
	}
	for i := 0; i == 0 || i < len(names); i += size {
		if err := ctx.Err(); err != nil {
			return err
		}
		var p Page
		for _, n := range names[i:min(i+size, len(names))] {
			e := entries[n]
			if o.Delim && e.Dir && e.Size == 0 && e.ModTime.IsZero() {
				p.Prefixes = append(p.Prefixes, n)
				continue
			}
			p.Entries = append(p.Entries, e)
		}
		p.Truncated = i+size < len(names)
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

func (b *listBackend) Head(ctx context.Context, name string) (Entry, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.names[name]; ok {
		return e, nil
	}
	return Entry{}, fmt.Errorf("%w: %s", storage.ErrNotExist, name)
}

func (b *listBackend) ReadRange(context.Context, string, string, int64, int64) (io.ReadCloser, error) {
	return nil, errors.ErrUnsupported
}
func (b *listBackend) Put(context.Context, string, []byte, bool) error { return errors.ErrUnsupported }
func (b *listBackend) DeleteBatch(context.Context, []string) ([]error, error) {
	return nil, ErrBatchUnsupported
}
func (b *listBackend) DeleteOne(context.Context, string) error       { return errors.ErrUnsupported }
func (b *listBackend) DeleteDirEntity(context.Context, string) error { return errors.ErrUnsupported }
func (b *listBackend) Retryable(error) bool                          { return false }

// walked is what a walk reported, with SkipDir carried out.
func walkAll(t *testing.T, s *Store, prefix string, pruned func(string) bool, reactive func(string) bool) ([]string, error) {
	t.Helper()
	var got []string
	err := s.WalkPruned(context.Background(), prefix, pruned, func(o storage.Object) error {
		got = append(got, fmt.Sprintf("%s %d %s", o.Key, o.Size, o.ModTime.Format(time.TimeOnly)))
		if o.IsDir && reactive != nil && reactive(o.Key) {
			return storage.SkipDir
		}
		return nil
	})
	return got, err
}

// theWalk is what the directory-by-directory walk reports for the same names: the walk's
// order, whatever the service's.
func theWalk(t *testing.T, b *listBackend, root, prefix string, pruned, reactive func(string) bool) []string {
	t.Helper()
	s := New(b, Config{Root: root, Delimited: true, Concurrency: 4})
	want, err := walkAll(t, s, prefix, pruned, reactive)
	if err != nil {
		t.Fatalf("delimited walk: %v", err)
	}
	return want
}

// TestFlatWalkMatchesTheWalk: on names made to trip the orders ('-', '.', ' ' and control
// characters sort before '/'; characters above U+FFFF and U+E000–U+FFFF swap in UTF-16),
// markers, directory entities, empty and dot components, and every service order, page
// size, concurrency, and skipped directory (known before or told by fn), the flat walk
// reports what the directory-by-directory walk reports, in its order.
func TestFlatWalkMatchesTheWalk(t *testing.T) {
	parts := []string{"a", "a-b", "a.c", "a b", "a\x01", "b", "b=1", "b=10", "_delta_log", "_x", ".h", "A", "z",
		"\U0001F600", "\uE000", "\uFFFD", "é", "p-0", "p-1"}
	seed, iters := uint64(1), 1000
	if v := os.Getenv("DELTAVACUUM_FLATWALK_SEED"); v != "" {
		// More names, elsewhere: DELTAVACUUM_FLATWALK_SEED=7 go test -run TestFlatWalkMatchesTheWalk
		seed, _ = strconv.ParseUint(v, 10, 64)
		iters = 5000
	}
	rng := rand.New(rand.NewPCG(seed, 2))
	var probes, froms, splits int
	defer func() { t.Logf("probes %d, listings started at a name %d, split walks %d", probes, froms, splits) }()
	defer func(b, p int) { probeBacklog, probePages = b, p }(probeBacklog, probePages)
	for iter := range iters {
		order := []Order{OrderBytes, OrderUTF16, OrderTree, OrderTreeUTF16}[iter%4]
		var names []string
		seen := map[string]bool{}
		for range 1 + rng.IntN(60) {
			depth := 1 + rng.IntN(4)
			var comps []string
			for range depth {
				comps = append(comps, parts[rng.IntN(len(parts))])
			}
			n := strings.Join(comps, "/")
			switch rng.IntN(20) {
			case 0:
				n += "/" // a marker
			case 1:
				n = strings.Replace(n, "/", "//", 1) // an empty component
			case 2:
				n = "./" + n
			}
			seen[n] = true
		}
		if iter%10 == 0 {
			// Folders of many files: enough pages to split the listing.
			for i := range 600 + rng.IntN(600) {
				seen[fmt.Sprintf("date=2020-01-%02d/part-%d.parquet", i%30, i)] = true
			}
		}
		for n := range seen {
			// A name cannot be a file and below a file in a tree order (a hierarchical
			// namespace); in lexical orders it can (S3).
			names = append(names, n)
		}
		if order&(OrderTree|OrderTreeUTF16) != 0 {
			names = treeNames(names, rng)
		} else {
			names = folderBlobs(names, seen, rng)
		}
		pageSize := 1 + rng.IntN(7)
		if iter%10 == 0 {
			pageSize = 30 + rng.IntN(20)
			if iter%20 == 0 {
				order = OrderBytes
			}
		}
		// Ask whether a folder exists as soon as a few entries wait, or never.
		probeBacklog, probePages = 1+rng.IntN(8), 0
		if rng.IntN(4) == 0 {
			probeBacklog = 1 << 30
		}
		b := newListBackend(order, pageSize, names...)
		b.from = rng.IntN(3) > 0
		b.to = rng.IntN(2) == 0
		if rng.IntN(3) == 0 {
			b.claimed = OrderBytes | OrderUTF16 | OrderTree | OrderTreeUTF16 // the service says nothing
		}
		prunedName := parts[rng.IntN(len(parts))]
		reactiveName := parts[rng.IntN(len(parts))]
		pruned := func(d string) bool { return storage.Base(d) == prunedName }
		reactive := func(d string) bool { return storage.Base(d) == reactiveName }
		if rng.IntN(3) == 0 {
			pruned = nil
		}
		root := ""
		if rng.IntN(4) == 0 {
			root = "r/"
			for i, n := range names {
				names[i] = root + n
			}
			b = newListBackend(order, pageSize, names...)
		}
		if iter%10 == 0 {
			b.delay = time.Millisecond // the first range is still listing when it splits
		}
		want := theWalk(t, b, root, "", pruned, reactive)
		for _, conc := range []int{1, 2, 16} {
			b.mu.Lock()
			b.probes, b.froms = 0, nil
			b.mu.Unlock()
			s := New(b, Config{Root: root, Concurrency: conc})
			got, err := walkAll(t, s, "", pruned, reactive)
			if err != nil {
				t.Fatalf("iteration %d (order %b, page %d, conc %d), names %q: %v", iter, order, pageSize, conc, names, err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("iteration %d (order %b, page %d, conc %d, pruned %q, reactive %q), names %q: walk (-delimited +flat):\n%s",
					iter, order, pageSize, conc, prunedName, reactiveName, names, diff)
			}
			b.mu.Lock()
			probes += b.probes
			froms += len(b.froms)
			for _, f := range b.froms {
				if !strings.HasSuffix(f, "0") {
					splits++
					break
				}
			}
			b.mu.Unlock()
		}
	}
}

// treeNames makes names a hierarchical namespace can hold: no file where a directory is;
// some directories become directory entities ("dir:" names).
func treeNames(names []string, rng *rand.Rand) []string {
	dirs := map[string]bool{}
	for _, n := range names {
		for i := 0; i < len(n); i++ {
			if n[i] == '/' {
				dirs[n[:i]] = true
			}
		}
	}
	var out []string
	for _, n := range names {
		if !dirs[n] && !strings.HasSuffix(n, "/") {
			out = append(out, n)
		}
	}
	for d := range dirs {
		if d != "" && !strings.HasSuffix(d, "/") && rng.IntN(2) == 0 {
			out = append(out, "dir:"+d)
		}
	}
	return out
}

// folderBlobs adds directory entities to names listed in a lexical order (Azure folder blobs
// of a flat namespace, named without '/': "a" before "a-b" and "a/x"), where no file has the
// name.
func folderBlobs(names []string, seen map[string]bool, rng *rand.Rand) []string {
	dirs := map[string]bool{}
	for _, n := range names {
		for i := 1; i < len(n); i++ {
			if n[i] == '/' && n[i-1] != '/' {
				dirs[n[:i]] = true
			}
		}
	}
	var sorted []string
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	for _, d := range sorted {
		if !seen[d] && rng.IntN(3) == 0 {
			names = append(names, "dir:"+d)
		}
	}
	return names
}
