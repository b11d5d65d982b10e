package azure

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
)

// fakeHNS is an in-process hierarchical-namespace account (ADLS Gen2, or OneLake) serving the
// parts of the Blob and DFS APIs the store uses, with their HNS behaviour: writing a file
// creates its parent directories, which listings report as blobs with hdi_isfolder=true;
// deleting a file leaves them; Blob Batch is refused with a 400 (as some HNS accounts do,
// and OneLake to a batch not scoped to an item); and the Blob API refuses to delete
// directories when blobDeletesDirs is false, so the DFS API must.
type fakeHNS struct {
	t               *testing.T
	blobDeletesDirs bool

	mu      sync.Mutex
	files   map[string][]byte    // path -> content
	dirs    map[string]time.Time // path -> creation time
	dfsDels int
	batches int
	// lagging is how many more deletes of an empty directory answer 409 DirectoryIsNotEmpty,
	// as ADLS Gen2 and OneLake do for a moment after its last child was deleted.
	lagging int
}

func newFakeHNS(t *testing.T, blobDeletesDirs bool) (*fakeHNS, *httptest.Server) {
	f := &fakeHNS{t: t, blobDeletesDirs: blobDeletesDirs, files: map[string][]byte{}, dirs: map[string]time.Time{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

const fakeContainer = "ws"

func azError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, code)
}

func (f *fakeHNS) hasChildren(dir string) bool {
	for p := range f.files {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	for p := range f.dirs {
		if strings.HasPrefix(p, dir+"/") {
			return true
		}
	}
	return false
}

func (f *fakeHNS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Paths: /acct/ws/... (Blob) and /dfs/ws/... (DFS).
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) < 2 || parts[1] != fakeContainer {
		azError(w, http.StatusNotFound, "ContainerNotFound")
		return
	}
	name := ""
	if len(parts) == 3 {
		name = parts[2]
	}
	q := r.URL.Query()
	if parts[0] == "dfs" {
		if r.Method != http.MethodDelete || q.Get("recursive") != "false" {
			azError(w, http.StatusBadRequest, "InvalidQueryParameterValue")
			return
		}
		f.dfsDels++
		if _, ok := f.dirs[name]; !ok {
			if _, ok := f.files[name]; !ok {
				azError(w, http.StatusNotFound, "PathNotFound")
				return
			}
			delete(f.files, name)
			w.WriteHeader(http.StatusOK)
			return
		}
		if f.hasChildren(name) {
			azError(w, http.StatusConflict, "DirectoryNotEmpty")
			return
		}
		if f.lagging > 0 {
			f.lagging--
			azError(w, http.StatusConflict, "DirectoryIsNotEmpty")
			return
		}
		delete(f.dirs, name)
		w.WriteHeader(http.StatusOK)
		return
	}
	switch {
	case r.Method == http.MethodGet && q.Get("comp") == "list":
		f.list(w, q)
	case r.Method == http.MethodPost && q.Get("comp") == "batch":
		f.batches++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":{"code":"BadRequest","message":"Either WorkspaceId or ArtifactId are missing in the request"}}`)
	case r.Method == http.MethodPut:
		if _, ok := f.dirs[name]; ok {
			azError(w, http.StatusConflict, "PathConflict")
			return
		}
		if r.Header.Get("If-None-Match") == "*" {
			if _, ok := f.files[name]; ok {
				azError(w, http.StatusConflict, "BlobAlreadyExists")
				return
			}
		}
		b, _ := io.ReadAll(r.Body)
		for d := name; strings.Contains(d, "/"); {
			d = d[:strings.LastIndexByte(d, '/')]
			if _, ok := f.dirs[d]; !ok {
				f.dirs[d] = time.Now()
			}
		}
		f.files[name] = b
		w.Header().Set("ETag", `"0x1"`)
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodHead:
		if _, ok := f.dirs[name]; ok {
			w.Header().Set("x-ms-meta-hdi_isfolder", "true")
			w.Header().Set("x-ms-resource-type", "directory")
			w.Header().Set("Last-Modified", f.dirs[name].UTC().Format(http.TimeFormat))
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
			return
		}
		b, ok := f.files[name]
		if !ok {
			w.Header().Set("x-ms-error-code", "BlobNotFound")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(b)))
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("x-ms-resource-type", "file")
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodDelete:
		if _, ok := f.dirs[name]; ok {
			switch {
			case !f.blobDeletesDirs:
				azError(w, http.StatusConflict, "OperationNotSupportedOnDirectory")
			case f.hasChildren(name):
				azError(w, http.StatusConflict, "DirectoryIsNotEmpty")
			case f.lagging > 0:
				f.lagging--
				azError(w, http.StatusConflict, "DirectoryIsNotEmpty")
			default:
				delete(f.dirs, name)
				w.WriteHeader(http.StatusAccepted)
			}
			return
		}
		if _, ok := f.files[name]; !ok {
			azError(w, http.StatusNotFound, "BlobNotFound")
			return
		}
		delete(f.files, name)
		w.WriteHeader(http.StatusAccepted)
	default:
		azError(w, http.StatusBadRequest, "UnsupportedHttpVerb")
	}
}

type xmlProps struct {
	LastModified  string `xml:"Last-Modified"`
	Etag          string `xml:"Etag"`
	ContentLength int64  `xml:"Content-Length"`
	ResourceType  string `xml:"ResourceType,omitempty"`
}

type xmlBlob struct {
	XMLName    xml.Name `xml:"Blob"`
	Name       string   `xml:"Name"`
	Properties xmlProps `xml:"Properties"`
	Metadata   *xmlMeta `xml:"Metadata,omitempty"`
}

type xmlMeta struct {
	IsFolder string `xml:"hdi_isfolder,omitempty"`
}

type xmlPrefix struct {
	XMLName xml.Name `xml:"BlobPrefix"`
	Name    string   `xml:"Name"`
}

// list serves List Blobs, one page of everything (the fake does not paginate).
func (f *fakeHNS) list(w http.ResponseWriter, q url.Values) {
	prefix, delim := q.Get("prefix"), q.Get("delimiter")
	type item struct {
		name string
		v    any
	}
	var items []item
	seen := map[string]bool{}
	add := func(name string, dir bool, size int64, mod time.Time) {
		rest := name[len(prefix):]
		if delim != "" {
			if i := strings.Index(rest, delim); i >= 0 {
				p := prefix + rest[:i+1]
				if !seen[p] {
					seen[p] = true
					items = append(items, item{p, xmlPrefix{Name: p}})
				}
				return
			}
		}
		b := xmlBlob{Name: name, Properties: xmlProps{LastModified: mod.UTC().Format(http.TimeFormat), Etag: "0x1", ContentLength: size, ResourceType: "file"}}
		if dir {
			b.Properties.ResourceType = "directory"
			b.Metadata = &xmlMeta{IsFolder: "true"}
		}
		items = append(items, item{name, b})
	}
	for p, b := range f.files {
		if strings.HasPrefix(p, prefix) {
			add(p, false, int64(len(b)), time.Now())
		}
	}
	for p, mod := range f.dirs {
		if strings.HasPrefix(p, prefix) && p+"/" != prefix {
			add(p, true, 0, mod)
		}
	}
	sort.Slice(items, func(i, j int) bool { return items[i].name < items[j].name })
	var buf strings.Builder
	buf.WriteString(`<?xml version="1.0" encoding="utf-8"?><EnumerationResults ContainerName="` + fakeContainer + `">`)
	fmt.Fprintf(&buf, "<Prefix>%s</Prefix><Delimiter>%s</Delimiter><Blobs>", xmlEscape(prefix), xmlEscape(delim))
	for _, it := range items {
		b, _ := xml.Marshal(it.v)
		buf.Write(b)
	}
	buf.WriteString("</Blobs><NextMarker/></EnumerationResults>")
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, buf.String())
}

func xmlEscape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

func newFakeStore(t *testing.T, srv *httptest.Server, batch int) *Store {
	s, err := New(context.Background(), Config{
		ServiceURL: srv.URL + "/acct",
		DFSURL:     srv.URL + "/dfs",
		Container:  fakeContainer,
		Prefix:     "item.Lakehouse/Tables/t",
		Account:    "acct",
		AccountKey: "a2V5", // not checked by the fake
		AllowHTTP:  true,
		BatchSize:  batch,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func walkAll(t *testing.T, s *Store, prefix string) []storage.Object {
	t.Helper()
	var got []storage.Object
	if err := s.Walk(context.Background(), prefix, func(o storage.Object) error {
		got = append(got, o)
		return nil
	}); err != nil {
		t.Fatalf("Walk(%q): %v", prefix, err)
	}
	return got
}

func keysOf(objs []storage.Object) []string {
	var ks []string
	for _, o := range objs {
		ks = append(ks, o.Key)
	}
	return ks
}

func TestHierarchicalNamespace(t *testing.T) {
	for _, blobDeletesDirs := range []bool{false, true} {
		t.Run(fmt.Sprintf("blobDeletesDirs=%v", blobDeletesDirs), func(t *testing.T) {
			f, srv := newFakeHNS(t, blobDeletesDirs)
			s := newFakeStore(t, srv, 10)
			ctx := context.Background()
			keys := []string{"p=1/q=a/f1.parquet", "p=1/q=a/f2.parquet", "p=1/f3.parquet", "_delta_log/0.json"}
			for _, k := range keys {
				if err := s.Put(ctx, k, []byte("x")); err != nil {
					t.Fatal(err)
				}
			}
			// Directories are listed once, as directories, with their modification times.
			got := walkAll(t, s, "")
			want := []string{"_delta_log/", "_delta_log/0.json", "p=1/", "p=1/f3.parquet", "p=1/q=a/", "p=1/q=a/f1.parquet", "p=1/q=a/f2.parquet"}
			if !slices.Equal(keysOf(got), want) {
				t.Fatalf("Walk = %q, want %q", keysOf(got), want)
			}
			for _, o := range got {
				if o.IsDir && o.ModTime.IsZero() {
					t.Errorf("directory %q: zero modification time", o.Key)
				}
			}
			// Deleting files: the batch is refused, the store deletes singly from then on.
			files := []string{"p=1/q=a/f1.parquet", "p=1/q=a/f2.parquet", "p=1/f3.parquet"}
			res, err := s.Delete(ctx, files)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Err != nil || r.Gone {
					t.Errorf("Delete(%q) = %+v", r.Key, r)
				}
			}
			if !s.BatchDisabled() || f.batches != 1 {
				t.Errorf("BatchDisabled = %v after %d refused batches", s.BatchDisabled(), f.batches)
			}
			// The directories stay (HNS), empty, and are still walked.
			if got := keysOf(walkAll(t, s, "")); !slices.Equal(got, []string{"_delta_log/", "_delta_log/0.json", "p=1/", "p=1/q=a/"}) {
				t.Fatalf("Walk after deleting files = %q", got)
			}
			if got := walkAll(t, s, "p=1/q=a/"); len(got) != 0 {
				t.Fatalf("Walk of the empty directory = %q", keysOf(got))
			}
			o, err := s.Stat(ctx, "p=1/q=a/")
			if err != nil || !o.IsDir || o.ModTime.IsZero() {
				t.Fatalf("Stat(empty dir) = %+v, %v", o, err)
			}
			if o, err := s.Stat(ctx, "p=1"); err != nil || !o.IsDir || o.Key != "p=1/" {
				t.Fatalf("Stat(p=1) = %+v, %v", o, err)
			}
			// A parent with an empty subdirectory is not empty.
			res, _ = s.Delete(ctx, []string{"p=1/"})
			if !errors.Is(res[0].Err, storage.ErrNotEmpty) {
				t.Fatalf("Delete(p=1/) = %+v, want ErrNotEmpty", res[0])
			}
			// Bottom-up, the directories go: by the Blob API, or the DFS API when it refuses.
			res, err = s.Delete(ctx, []string{"p=1/q=a/", "p=1/", "gone/"})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res[:2] {
				if r.Err != nil || r.Gone {
					t.Errorf("Delete(%q) = %+v, want deleted", r.Key, r)
				}
			}
			if !res[2].Gone || res[2].Err != nil {
				t.Errorf("Delete(gone/) = %+v, want Gone", res[2])
			}
			if want := map[bool]int{false: 2, true: 0}[blobDeletesDirs]; f.dfsDels != want {
				t.Errorf("%d DFS deletes, want %d", f.dfsDels, want)
			}
			if got := keysOf(walkAll(t, s, "")); !slices.Equal(got, []string{"_delta_log/", "_delta_log/0.json"}) {
				t.Fatalf("Walk at the end = %q", got)
			}
			if _, err := s.Stat(ctx, "p=1/"); !errors.Is(err, storage.ErrNotExist) {
				t.Fatalf("Stat(p=1/) after its delete: %v", err)
			}
			// PutIfAbsent: 409 BlobAlreadyExists means taken.
			if err := s.PutIfAbsent(ctx, "_delta_log/0.json", []byte("y")); !errors.Is(err, storage.ErrExist) {
				t.Fatalf("PutIfAbsent of a taken key: %v", err)
			}
		})
	}
}

// A directory the DFS API finds non-empty (written into after the store's check) is reported
// not empty, never deleted.
func TestDFSDirectoryNotEmpty(t *testing.T) {
	f, srv := newFakeHNS(t, false)
	s := newFakeStore(t, srv, 10)
	ctx := context.Background()
	if err := s.Put(ctx, "d/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	err := s.b.DeleteDirEntity(ctx, "item.Lakehouse/Tables/t/d")
	if !errors.Is(err, storage.ErrNotEmpty) {
		t.Fatalf("DeleteDirEntity of a non-empty directory: %v", err)
	}
	if f.dfsDels != 1 {
		t.Fatalf("%d DFS deletes, want 1", f.dfsDels)
	}
	if err := s.b.DeleteDirEntity(ctx, "item.Lakehouse/Tables/t/nope"); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("DeleteDirEntity of a missing directory: %v", err)
	}
}

// A 409 DirectoryIsNotEmpty for a directory the listing found empty (the service lagging
// behind the deletes of its children) is retried, and the directory goes; one the listing
// finds non-empty is final at once.
func TestDirectoryNotEmptyForAMomentIsRetried(t *testing.T) {
	for _, blobDeletesDirs := range []bool{false, true} {
		t.Run(fmt.Sprintf("blobDeletesDirs=%v", blobDeletesDirs), func(t *testing.T) {
			f, srv := newFakeHNS(t, blobDeletesDirs)
			s := newFakeStore(t, srv, 10)
			ctx := context.Background()
			if err := s.Put(ctx, "p=1/f.parquet", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if res, err := s.Delete(ctx, []string{"p=1/f.parquet"}); err != nil || res[0].Err != nil {
				t.Fatalf("deleting the file: %v %+v", err, res)
			}
			f.mu.Lock()
			f.lagging = 2
			f.mu.Unlock()
			res, err := s.Delete(ctx, []string{"p=1/"})
			if err != nil || res[0].Err != nil || res[0].Gone {
				t.Fatalf("Delete(p=1/) = %+v, %v; want deleted after the service caught up", res, err)
			}
			if _, err := s.Stat(ctx, "p=1/"); !errors.Is(err, storage.ErrNotExist) {
				t.Errorf("p=1/ still there: %v", err)
			}
			if f.lagging != 0 {
				t.Errorf("%d lagging answers left: not retried", f.lagging)
			}
		})
	}
}
