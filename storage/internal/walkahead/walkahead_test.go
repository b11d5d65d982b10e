package walkahead

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// tree is a random directory tree: directory key -> its sorted children.
type tree map[string][]storage.Object

func randomTree(r *rand.Rand) tree {
	t := tree{}
	var fill func(dir string, depth int)
	fill = func(dir string, depth int) {
		n := r.IntN(6)
		var kids []storage.Object
		for i := range n {
			name := fmt.Sprintf("n%02d", i)
			if depth < 4 && r.IntN(3) == 0 {
				kids = append(kids, storage.Object{Key: dir + name + "/", IsDir: true, ModTime: time.Unix(int64(depth), 0)})
				fill(dir+name+"/", depth+1)
			} else {
				kids = append(kids, storage.Object{Key: dir + name, Size: int64(i)})
			}
		}
		t[dir] = kids
	}
	fill("", 0)
	return t
}

// sequential is the order a plain recursive walk reports, skipping below the keys in skip.
func (t tree) sequential(dir string, skip map[string]bool, out *[]string) {
	for _, o := range t[dir] {
		*out = append(*out, o.Key)
		if o.IsDir && !skip[o.Key] {
			t.sequential(o.Key, skip, out)
		}
	}
}

func (t tree) list(seed uint64, active, peak *atomic.Int64) ListFunc {
	return func(ctx context.Context, dir string, found func(time.Time)) (Listing, error) {
		n := active.Add(1)
		defer active.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		// A delay that depends on the directory, so that listings finish out of order.
		h := seed
		for _, c := range []byte(dir) {
			h = h*31 + uint64(c)
		}
		time.Sleep(time.Duration(h%300) * time.Microsecond)
		if err := ctx.Err(); err != nil {
			return Listing{}, err
		}
		kids := t[dir]
		return Listing{Children: kids, Entries: len(kids)}, nil
	}
}

func TestWalkOrderIsSequential(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		tr := randomTree(r)
		skip := map[string]bool{}
		for dir := range tr {
			if dir != "" && r.IntN(4) == 0 {
				skip[dir] = true
			}
		}
		var want []string
		tr.sequential("", skip, &want)
		var active, peak atomic.Int64
		concurrency := 1 + int(seed%5)
		var got []string
		err := Walk(context.Background(), "", concurrency, tr.list(seed, &active, &peak), nil, func(o storage.Object) error {
			got = append(got, o.Key)
			if o.IsDir && skip[o.Key] {
				return storage.SkipDir
			}
			return nil
		})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d, concurrency %d: order\n got %v\nwant %v", seed, concurrency, got, want)
		}
		if p := peak.Load(); p > int64(concurrency) {
			t.Fatalf("seed %d: %d listings at once, limit %d", seed, p, concurrency)
		}
	}
}

func TestWalkErrors(t *testing.T) {
	boom := errors.New("boom")
	tr := tree{
		"":    {{Key: "a/", IsDir: true, ModTime: time.Unix(1, 0)}, {Key: "b/", IsDir: true, ModTime: time.Unix(1, 0)}},
		"a/":  {{Key: "a/x"}},
		"b/":  {{Key: "b/y"}},
		"no/": nil,
	}
	list := func(ctx context.Context, dir string, found func(time.Time)) (Listing, error) {
		if dir == "b/" {
			return Listing{}, boom
		}
		return Listing{Children: tr[dir], Entries: len(tr[dir])}, nil
	}
	var seen []string
	err := Walk(context.Background(), "", 4, list, nil, func(o storage.Object) error {
		seen = append(seen, o.Key)
		return nil
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "listing b/") {
		t.Fatalf("listing error: got %v", err)
	}
	if want := []string{"a/", "a/x", "b/"}; !slices.Equal(seen, want) {
		t.Fatalf("reported before the error: %v, want %v", seen, want)
	}

	stop := errors.New("stop")
	err = Walk(context.Background(), "", 4, list, nil, func(o storage.Object) error {
		if o.Key == "a/x" {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("callback error: got %v", err)
	}

	missing := errors.New("missing")
	err = Walk(context.Background(), "no/", 4, list, func(context.Context) error { return missing }, func(storage.Object) error { return nil })
	if !errors.Is(err, missing) {
		t.Fatalf("empty prefix: got %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	err = Walk(ctx, "", 4, list, nil, func(o storage.Object) error {
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled walk: got %v", err)
	}
}

func TestWalkMarkerModTime(t *testing.T) {
	marker := time.Unix(42, 0)
	tr := tree{
		"":   {{Key: "d/", IsDir: true}},
		"d/": {{Key: "d/f"}},
	}
	list := func(ctx context.Context, dir string, found func(time.Time)) (Listing, error) {
		if dir == "d/" {
			found(marker)
		}
		return Listing{Children: tr[dir], Entries: len(tr[dir])}, nil
	}
	var got time.Time
	err := Walk(context.Background(), "", 2, list, nil, func(o storage.Object) error {
		if o.Key == "d/" {
			got = o.ModTime
		}
		return nil
	})
	if err != nil || !got.Equal(marker) {
		t.Fatalf("directory time from its marker: got %v, %v", got, err)
	}
}
