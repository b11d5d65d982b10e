package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deltavacuum/deltavacuum/storage"
)

// flat is a backend over a map of names to versions, with no directory entities.
type flat struct {
	mu      sync.Mutex
	objects map[string]string // name -> version
	calls   []string
}

func (f *flat) List(ctx context.Context, prefix string, o ListOptions, fn func(Page) error) error {
	delim := o.Delim
	f.mu.Lock()
	var p Page
	seen := map[string]bool{}
	for n, v := range f.objects {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		if i := strings.IndexByte(n[len(prefix):], '/'); delim && i >= 0 {
			if d := n[:len(prefix)+i+1]; !seen[d] {
				seen[d] = true
				p.Prefixes = append(p.Prefixes, d)
			}
			continue
		}
		p.Entries = append(p.Entries, Entry{Name: n, Size: 1, Version: v})
	}
	f.mu.Unlock()
	sort.Slice(p.Entries, func(i, j int) bool { return p.Entries[i].Name < p.Entries[j].Name })
	return fn(p)
}

func (f *flat) Head(ctx context.Context, name string) (Entry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.objects[name]
	if !ok {
		return Entry{}, fmt.Errorf("%w: %s", storage.ErrNotExist, name)
	}
	return Entry{Name: name, Size: 1, Version: v}, nil
}

func (f *flat) ReadRange(ctx context.Context, name, version string, off, n int64) (io.ReadCloser, error) {
	return nil, errors.ErrUnsupported
}

func (f *flat) Put(ctx context.Context, name string, data []byte, ifAbsent bool) error {
	return errors.ErrUnsupported
}

func (f *flat) DeleteBatch(ctx context.Context, names []string) ([]error, error) {
	return nil, ErrBatchUnsupported
}

func (f *flat) DeleteOne(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "DeleteOne "+name)
	if _, ok := f.objects[name]; !ok {
		return fmt.Errorf("%w: %s", storage.ErrNotExist, name)
	}
	delete(f.objects, name)
	return nil
}

func (f *flat) DeleteDirEntity(ctx context.Context, name string) error { return errors.ErrUnsupported }
func (f *flat) Retryable(err error) bool                               { return false }

// versioned adds the conditional delete to flat.
type versioned struct{ *flat }

func (v versioned) DeleteOneIf(ctx context.Context, name, version string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.calls = append(v.calls, "DeleteOneIf "+name+" "+version)
	have, ok := v.objects[name]
	switch {
	case !ok:
		return fmt.Errorf("%w: %s", storage.ErrNotExist, name)
	case have != version:
		return fmt.Errorf("%w: %s", storage.ErrChanged, name)
	}
	delete(v.objects, name)
	return nil
}

func walkVersions(t *testing.T, s *Store) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := s.Walk(context.Background(), "", func(o storage.Object) error {
		if !o.IsDir {
			got[o.Key] = o.Version
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestWalkReportsVersionsOnlyWhenOptedIn: a backend's Entry.Version (an ETag on S3 and Azure)
// reaches Object.Version only with Config.ConditionalDeletes (GCS's generations).
func TestWalkReportsVersionsOnlyWhenOptedIn(t *testing.T) {
	objects := func() map[string]string { return map[string]string{"r/a": "7", "r/d/b": "8"} }
	plain := New(&flat{objects: objects()}, Config{Root: "r/"})
	if diff := cmp.Diff(map[string]string{"a": "", "d/b": ""}, walkVersions(t, plain)); diff != "" {
		t.Errorf("without ConditionalDeletes (-want +got):\n%s", diff)
	}
	opted := New(versioned{&flat{objects: objects()}}, Config{Root: "r/", ConditionalDeletes: true})
	if diff := cmp.Diff(map[string]string{"a": "7", "d/b": "8"}, walkVersions(t, opted)); diff != "" {
		t.Errorf("with ConditionalDeletes (-want +got):\n%s", diff)
	}
}

// TestDeleteIfUnchanged: a key with a version goes through DeleteOneIf (changed: kept, with
// ErrChanged; missing: gone); one without through DeleteOne; a version on a store that cannot
// delete conditionally fails its key, and nothing is sent for it.
func TestDeleteIfUnchanged(t *testing.T) {
	ctx := context.Background()
	f := &flat{objects: map[string]string{"r/same": "1", "r/changed": "3", "r/plain": "5"}}
	s := New(versioned{f}, Config{Root: "r/", ConditionalDeletes: true})
	res, err := s.DeleteIfUnchanged(ctx, []string{"same", "changed", "plain", "missing"}, []string{"1", "2", "", "4"})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[0].Gone {
		t.Errorf("same: got %+v, want deleted", res[0])
	}
	if !errors.Is(res[1].Err, storage.ErrChanged) {
		t.Errorf("changed: got %+v, want ErrChanged", res[1])
	}
	if res[2].Err != nil || res[2].Gone {
		t.Errorf("plain: got %+v, want deleted", res[2])
	}
	if res[3].Err != nil || !res[3].Gone {
		t.Errorf("missing: got %+v, want gone", res[3])
	}
	if diff := cmp.Diff(map[string]string{"r/changed": "3"}, f.objects); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	sort.Strings(f.calls)
	want := []string{"DeleteOne r/plain", "DeleteOneIf r/changed 2", "DeleteOneIf r/missing 4", "DeleteOneIf r/same 1"}
	if diff := cmp.Diff(want, f.calls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}

	if _, err := s.DeleteIfUnchanged(ctx, []string{"a", "b"}, []string{"1"}); err == nil {
		t.Error("versions shorter than keys: got no error")
	}

	for name, st := range map[string]*Store{
		"no VersionDeleter":      New(&flat{objects: map[string]string{"x": "1"}}, Config{ConditionalDeletes: true}),
		"not ConditionalDeletes": New(versioned{&flat{objects: map[string]string{"x": "1"}}}, Config{}),
	} {
		res, err := st.DeleteIfUnchanged(ctx, []string{"x"}, []string{"1"})
		if err != nil || res[0].Err == nil {
			t.Errorf("%s: got %+v, %v; want the key failed", name, res, err)
		}
		if _, err := st.Stat(ctx, "x"); err != nil {
			t.Errorf("%s: x is gone (%v); nothing may be deleted", name, err)
		}
	}
}
