package azure

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

// fakeOneLake answers Blob requests as OneLake does for one workspace: Put Blob and Delete
// Blob by full path (/WORKSPACE/ITEM/...), and Blob Batch refused with OneLake's 400 when it is
// scoped to the workspace alone (/WORKSPACE?restype=container&comp=batch, as delta-rs issue
// 4401 and arrow-rs-object-store issue 701 record). A batch scoped to the item
// (/WORKSPACE/ITEM?restype=container&comp=batch) is served when itemBatches is true, and
// refused alike otherwise: the two answers deltavacuum must handle. It is a recorded
// response, not a real service: no OneLake is reachable from the tests.
type fakeOneLake struct {
	t           *testing.T
	workspace   string
	itemBatches bool

	mu         sync.Mutex
	files      map[string]bool // "ITEM/path" -> exists
	wsBatches  int             // batch requests scoped to the workspace
	itemPosts  int             // batch requests scoped to an item
	singles    int             // Delete Blob requests
	subPaths   []string        // the paths of the batches' sub-requests
	badSubPath []string        // sub-requests outside the batch's item
}

func newFakeOneLake(t *testing.T, itemBatches bool) (*fakeOneLake, *httptest.Server) {
	f := &fakeOneLake{t: t, workspace: "ws", itemBatches: itemBatches, files: map[string]bool{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

const oneLakeRefusal = `{"error":{"code":"BadRequest","message":"Either WorkspaceId or ArtifactId are missing in the request"}}`

func (f *fakeOneLake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ws, name, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if ws != f.workspace {
		azError(w, http.StatusNotFound, "ContainerNotFound")
		return
	}
	if r.Header.Get("Authorization") != "Bearer fake-entra-token" {
		azError(w, http.StatusUnauthorized, "InvalidAuthenticationInfo")
		return
	}
	q := r.URL.Query()
	switch {
	case r.Method == http.MethodPost && q.Get("comp") == "batch":
		if name == "" {
			f.wsBatches++
		} else {
			f.itemPosts++
		}
		if name == "" || strings.Contains(name, "/") || !f.itemBatches {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, oneLakeRefusal)
			return
		}
		f.batch(w, r, name)
	case r.Method == http.MethodPut:
		io.Copy(io.Discard, r.Body)
		f.files[name] = true
		w.Header().Set("ETag", `"0x1"`)
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodDelete:
		f.singles++
		f.deleteBlob(w, name)
	default:
		azError(w, http.StatusBadRequest, "UnsupportedHttpVerb")
	}
}

func (f *fakeOneLake) deleteBlob(w http.ResponseWriter, name string) {
	if !f.files[name] {
		azError(w, http.StatusNotFound, "BlobNotFound")
		return
	}
	delete(f.files, name)
	w.WriteHeader(http.StatusAccepted)
}

// batch serves a Blob Batch scoped to item: each sub-request is DELETE /WORKSPACE/ITEM/PATH.
func (f *fakeOneLake) batch(w http.ResponseWriter, r *http.Request, item string) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		http.Error(w, "bad content type", http.StatusBadRequest)
		return
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	var out strings.Builder
	const boundary = "batchresponse_fake"
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		id := part.Header.Get("Content-ID")
		sub, err := http.ReadRequest(bufio.NewReader(part))
		if err != nil {
			http.Error(w, "bad sub-request", http.StatusBadRequest)
			return
		}
		p, _ := url.PathUnescape(sub.URL.EscapedPath())
		f.subPaths = append(f.subPaths, p)
		fmt.Fprintf(&out, "--%s\r\nContent-Type: application/http\r\nContent-ID: %s\r\n\r\n", boundary, id)
		rel, ok := strings.CutPrefix(p, "/"+f.workspace+"/"+item+"/")
		switch {
		case sub.Method != http.MethodDelete || !ok:
			f.badSubPath = append(f.badSubPath, p)
			out.WriteString("HTTP/1.1 400 Bad Request\r\nx-ms-error-code: InvalidUri\r\nContent-Length: 0\r\n\r\n")
		case !f.files[item+"/"+rel]:
			out.WriteString("HTTP/1.1 404 The specified blob does not exist.\r\nx-ms-error-code: BlobNotFound\r\nContent-Length: 0\r\n\r\n")
		default:
			delete(f.files, item+"/"+rel)
			out.WriteString("HTTP/1.1 202 Accepted\r\nx-ms-delete-type-permanent: true\r\nContent-Length: 0\r\n\r\n")
		}
	}
	fmt.Fprintf(&out, "--%s--\r\n", boundary)
	w.Header().Set("Content-Type", "multipart/mixed; boundary="+boundary)
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, out.String())
}

// fixedToken is a Microsoft Entra credential that always has a token (OneLake takes no other).
type fixedToken struct{}

func (fixedToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "fake-entra-token"}, nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// toLoopback sends every request to srv, whatever its host: the store is configured for the
// real OneLake host name (so that its OneLake rules apply), and nothing leaves 127.0.0.1.
func toLoopback(srv *httptest.Server) func(http.RoundTripper) http.RoundTripper {
	u, _ := url.Parse(srv.URL)
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.URL.Scheme, r.URL.Host, r.Host = "http", u.Host, ""
			return rt.RoundTrip(r)
		})
	}
}

func newOneLakeStore(t *testing.T, srv *httptest.Server, prefix, scope string) *Store {
	t.Helper()
	s, err := New(context.Background(), Config{
		ServiceURL:    "https://onelake.blob.fabric.microsoft.com",
		Container:     "ws",
		Prefix:        prefix,
		Credential:    fixedToken{},
		BatchSize:     4,
		MaxAttempts:   1,
		WrapTransport: toLoopback(srv),
		BatchScope:    scope,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var oneLakeKeys = []string{"part-0.parquet", "part-1.parquet", "p=a b/part-2.parquet", "p=00%3A00/part-3.parquet", "part-4.parquet", "part-5.parquet"}

func putKeys(t *testing.T, s *Store, keys []string) {
	t.Helper()
	for _, k := range keys {
		if err := s.Put(context.Background(), k, []byte("x")); err != nil {
			t.Fatalf("Put(%q): %v", k, err)
		}
	}
}

func deleteAllOK(t *testing.T, s *Store, keys []string) {
	t.Helper()
	res, err := s.Delete(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil || r.Gone {
			t.Errorf("Delete(%q) = %+v, want deleted", r.Key, r)
		}
	}
}

// OneLake's Blob Batch goes to the item (/WORKSPACE/ITEM?restype=container&comp=batch), its
// sub-requests name the full paths: no request is refused, none is sent singly.
func TestOneLakeBatchScopedToItem(t *testing.T) {
	f, srv := newFakeOneLake(t, true)
	s := newOneLakeStore(t, srv, "lh.Lakehouse/Tables/t", "test:"+t.Name())
	putKeys(t, s, oneLakeKeys)
	deleteAllOK(t, s, oneLakeKeys)
	if f.wsBatches != 0 || f.itemPosts != 2 || f.singles != 0 {
		t.Errorf("%d workspace-scoped batches, %d item-scoped batches, %d single deletes; want 0, 2, 0", f.wsBatches, f.itemPosts, f.singles)
	}
	if len(f.badSubPath) != 0 {
		t.Errorf("sub-requests outside the item: %q", f.badSubPath)
	}
	for _, p := range f.subPaths {
		if !strings.HasPrefix(p, "/ws/lh.Lakehouse/Tables/t/") {
			t.Errorf("sub-request path %q is not the blob's full path", p)
		}
	}
	if len(f.files) != 0 || s.BatchDisabled() {
		t.Errorf("files left %v, BatchDisabled %v", f.files, s.BatchDisabled())
	}
}

// Where OneLake refuses the item-scoped batch too, the refusal is remembered for the host: the
// first store sends one batch, the next tables' stores none.
func TestOneLakeBatchRefusalRememberedForHost(t *testing.T) {
	f, srv := newFakeOneLake(t, false)
	scope := "test:" + t.Name()
	for i, table := range []string{"t1", "t2", "t3"} {
		s := newOneLakeStore(t, srv, "lh.Lakehouse/Tables/"+table, scope)
		putKeys(t, s, oneLakeKeys)
		deleteAllOK(t, s, oneLakeKeys)
		if f.itemPosts != 1 || f.wsBatches != 0 {
			t.Fatalf("after table %d: %d item-scoped and %d workspace-scoped batches, want 1 and 0 in all", i+1, f.itemPosts, f.wsBatches)
		}
		if !s.BatchDisabled() {
			t.Errorf("table %d: batches still on", i+1)
		}
	}
	if f.singles != 3*len(oneLakeKeys) || len(f.files) != 0 {
		t.Errorf("%d single deletes, want %d; files left %v", f.singles, 3*len(oneLakeKeys), f.files)
	}
	if blobstore.BatchRefusal(scope) == nil {
		t.Error("the refusal is not recorded for the scope")
	}
}

// A store at the workspace root has keys of many items: no batch can hold them, none is sent.
func TestOneLakeWorkspaceRootDeletesSingly(t *testing.T) {
	f, srv := newFakeOneLake(t, true)
	s := newOneLakeStore(t, srv, "", "test:"+t.Name())
	keys := []string{"lh.Lakehouse/Files/a.parquet", "other.Lakehouse/Files/b.parquet"}
	putKeys(t, s, keys)
	if !s.BatchDisabled() {
		t.Error("batches on at the workspace root")
	}
	deleteAllOK(t, s, keys)
	if f.wsBatches+f.itemPosts != 0 || f.singles != 2 {
		t.Errorf("%d batches, %d single deletes; want 0, 2", f.wsBatches+f.itemPosts, f.singles)
	}
}

// Without an explicit scope, stores on the same Blob endpoint share what a refusal taught:
// two tables of one account, one refused batch in all.
func TestBatchRefusalSharedByEndpoint(t *testing.T) {
	f, srv := newFakeHNS(t, true)
	for _, table := range []string{"t1", "t2"} {
		s, err := New(context.Background(), Config{
			ServiceURL: srv.URL + "/acct",
			Container:  fakeContainer,
			Prefix:     "item.Lakehouse/Tables/" + table,
			Account:    "acct",
			AccountKey: "a2V5",
			AllowHTTP:  true,
			BatchSize:  4,
		})
		if err != nil {
			t.Fatal(err)
		}
		putKeys(t, s, oneLakeKeys)
		deleteAllOK(t, s, oneLakeKeys)
	}
	if f.batches != 1 {
		t.Errorf("%d refused batches for two tables of one endpoint, want 1", f.batches)
	}
}

// failingToken is a Microsoft Entra credential that fails as the SDK's do: many lines.
type failingToken struct{}

func (failingToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{}, errors.New("ClientSecretCredential authentication failed. \n\tPOST https://login.example/token\n\t----\n\tRESPONSE 401: 401 Unauthorized\n\t{\"error\": \"invalid_client\", \"error_description\": \"AADSTS7000215: Invalid client secret provided.\"}\n")
}

// A OneLake table whose credential gives no token: one paragraph naming the table and the
// Entra credentials OneLake takes; no request reaches the service.
func TestOneLakeCredentialFailureIsOneParagraph(t *testing.T) {
	f, srv := newFakeOneLake(t, true)
	s, err := New(context.Background(), Config{
		ServiceURL:    "https://onelake.blob.fabric.microsoft.com",
		Container:     "ws",
		Prefix:        "lh.Lakehouse/Tables/t",
		Credential:    failingToken{},
		WrapTransport: toLoopback(srv),
		Location:      "abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t",
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Put(context.Background(), "_delta_log/x.json", []byte("x"))
	var ce *CredentialError
	if !errors.As(err, &ce) {
		t.Fatalf("Put without a token: %v, want a CredentialError", err)
	}
	msg := err.Error()
	for _, want := range []string{"abfss://ws@onelake.dfs.fabric.microsoft.com/lh.Lakehouse/Tables/t", "OneLake takes Microsoft Entra credentials",
		"azure_storage_token", "azure_client_id", "HTTP 401 AADSTS7000215"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message does not say %q: %s", want, msg)
		}
	}
	if strings.ContainsAny(msg, "\n\t") || strings.Contains(msg, "azure_storage_account_key") {
		t.Errorf("message %q: more than one line, or advice OneLake cannot take", msg)
	}
	if len(f.files) != 0 {
		t.Error("a request reached OneLake without a token")
	}
}
