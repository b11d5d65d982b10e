package azure

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAccount is an in-process Blob account serving what Recovery, Restore and Copy use, as
// Microsoft documents it:
//
//   - Get Blob Service Properties: the DeleteRetentionPolicy
//     (https://learn.microsoft.com/rest/api/storageservices/get-blob-service-properties);
//   - blob versioning: every write makes a new current version with a version id (returned by
//     Put Blob and HEAD as x-ms-version-id); a delete makes the current version a previous
//     one; List Blobs include=versions lists every version, the current one with
//     IsCurrentVersion (https://learn.microsoft.com/azure/storage/blobs/versioning-overview);
//   - blob soft delete: a delete keeps the blob, listed with include=deleted as Deleted with
//     its DeletedTime; with versioning on too, a delete makes a previous version instead
//     (https://learn.microsoft.com/azure/storage/blobs/soft-delete-blob-overview);
//     hierarchical-namespace accounts keep each deleted path with a DeletionId, and Undelete
//     Blob names the one to restore in x-ms-undelete-source, "blobPath?deletionid=ID"
//     (https://learn.microsoft.com/rest/api/storageservices/undelete-blob); writing a file
//     there creates its directories, which stay when it is deleted, and a file is not
//     restored into a missing directory (soft-delete-blob-overview, above); DFS Create Path
//     makes a directory and its parents, 409 PathAlreadyExists when there is one
//     (https://learn.microsoft.com/rest/api/storageservices/datalakestoragegen2/path/create),
//     and with x-ms-rename-source renames a path (If-None-Match applies to the destination;
//     404 SourcePathNotFound, 404 RenameDestinationParentPathNotFound); a HEAD of a file
//     reports x-ms-resource-type (Get Blob Properties, version 2020-10-02 and later);
//     a file stands in the way of every path below it: writing, copying to, renaming to or
//     creating a directory below it is 409 PathConflict ("the specified path, or an element
//     of the path, exists and its resource type is invalid for this operation", the answer
//     AzCopy users report for an upload below a file), a HEAD or a delete below it is 404;
//   - Copy Blob with If-None-Match on the destination (409 BlobAlreadyExists when taken), a
//     copy status (pending, success, failed, aborted) on the destination's HEAD, Abort Copy
//     Blob (https://learn.microsoft.com/rest/api/storageservices/copy-blob).
//
// The knobs below inject answers a test needs (a pending or failing copy, a 403, garbage).
type fakeAccount struct {
	t          *testing.T
	softDays   int
	versioning bool
	hns        bool

	mu       sync.Mutex
	blobs    map[string]*fakeBlob
	dirs     map[string]bool // hierarchical namespace only
	dfsDirs  int             // directories created through DFS
	renames  int
	versions []fakeVersion
	deleted  []fakeDeleted
	nextID   int
	clock    time.Time

	// propsStatus, when set, answers Get Blob Service Properties with this status; propsBody
	// replaces its XML.
	propsStatus int
	propsBody   string
	// listBody, when set, replaces the XML of a listing with include=deleted.
	listBody string
	// refuseVersions answers 400 to a listing that includes versions.
	refuseVersions bool
	// copyPolls is how many HEADs see a copy pending; copyEnd is how it ends ("" success).
	copyPolls int
	copyEnd   string
	// copyStatus, when set, replaces the x-ms-copy-status of the Copy Blob answer ("-": none).
	copyStatus string
	// beforeCopy runs (unlocked) when a copy request arrives; beforeRename likewise, with the
	// destination's name, when a rename does.
	beforeCopy   func()
	beforeRename func(dst string)
	// undeleteNoop answers 200 to Undelete Blob and restores nothing.
	undeleteNoop bool
	undeletes    []string // x-ms-undelete-source of each Undelete Blob
	aborts       int
}

type fakeBlob struct {
	data      []byte
	etag      string
	versionID string
	mod       time.Time
	copyID    string
	copyState string
	copyDesc  string
	copyPolls int
	copyEnd   string
}

type fakeVersion struct {
	name, id string
	data     []byte
}

type fakeDeleted struct {
	name, deletionID string
	data             []byte
	at               time.Time
}

func newFakeAccount(t *testing.T) (*fakeAccount, *httptest.Server) {
	f := &fakeAccount{t: t, blobs: map[string]*fakeBlob{}, dirs: map[string]bool{}, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fakeAccount) store(t *testing.T, srv *httptest.Server) *Store {
	s, err := New(context.Background(), Config{
		ServiceURL: srv.URL + "/acct",
		DFSURL:     srv.URL + "/dfs",
		Container:  fakeContainer,
		Prefix:     "tables/t",
		Account:    "acct",
		AccountKey: "a2V5",
		AllowHTTP:  true,
		BatchSize:  1,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.b.rec.pollBase = time.Millisecond
	return s
}

func (f *fakeAccount) tick() time.Time {
	f.clock = f.clock.Add(time.Second)
	return f.clock
}

// newVersionID returns a version id in the service's format, a timestamp with 7 decimals.
func (f *fakeAccount) newVersionID() string {
	return f.tick().Format("2006-01-02T15:04:05.0000000Z")
}

func (f *fakeAccount) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
	if len(parts) == 3 && parts[0] == "dfs" && parts[1] == fakeContainer && f.hns &&
		r.Method == http.MethodPut && q.Get("resource") == "directory" && r.Header.Get("If-None-Match") == "*" {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.dirs[parts[2]] || f.blobs[parts[2]] != nil {
			azError(w, http.StatusConflict, "PathAlreadyExists")
			return
		}
		if f.fileOnTheWay(parts[2]) {
			azError(w, http.StatusConflict, "PathConflict")
			return
		}
		f.dfsDirs++
		f.mkdirs(parts[2] + "/")
		w.WriteHeader(http.StatusCreated)
		return
	}
	if len(parts) == 3 && parts[0] == "dfs" && parts[1] == fakeContainer && f.hns &&
		r.Method == http.MethodPut && r.Header.Get("x-ms-rename-source") != "" {
		if f.beforeRename != nil {
			f.beforeRename(parts[2])
		}
		f.rename(w, r, parts[2])
		return
	}
	if len(parts) < 2 || parts[0] != "acct" {
		azError(w, http.StatusBadRequest, "InvalidUri")
		return
	}
	if parts[1] == "" && q.Get("restype") == "service" && q.Get("comp") == "properties" && r.Method == http.MethodGet {
		f.serviceProperties(w)
		return
	}
	if parts[1] != fakeContainer {
		azError(w, http.StatusNotFound, "ContainerNotFound")
		return
	}
	if len(parts) == 2 {
		if r.Method == http.MethodGet && q.Get("comp") == "list" {
			f.list(w, q)
			return
		}
		azError(w, http.StatusBadRequest, "UnsupportedHttpVerb")
		return
	}
	name := parts[2]
	if r.Method == http.MethodPut && r.Header.Get("x-ms-copy-source") != "" {
		if f.beforeCopy != nil {
			f.beforeCopy()
		}
		f.copy(w, r, name)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPut && q.Get("comp") == "undelete":
		f.undelete(w, r, name)
	case r.Method == http.MethodPut && q.Get("comp") == "copy":
		b := f.blobs[name]
		if b == nil || b.copyID != q.Get("copyid") || b.copyState != "pending" {
			azError(w, http.StatusConflict, "NoPendingCopyOperation")
			return
		}
		f.aborts++
		b.copyState, b.data = "aborted", nil
		w.WriteHeader(http.StatusNoContent)
	case r.Method == http.MethodPut:
		if r.Header.Get("If-None-Match") == "*" && f.blobs[name] != nil {
			azError(w, http.StatusConflict, "BlobAlreadyExists")
			return
		}
		if f.fileOnTheWay(name) {
			azError(w, http.StatusConflict, "PathConflict")
			return
		}
		data, _ := io.ReadAll(r.Body)
		b := f.write(name, data)
		w.Header().Set("ETag", b.etag)
		if b.versionID != "" {
			w.Header().Set("x-ms-version-id", b.versionID)
		}
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodHead && f.dirs[name]:
		w.Header().Set("x-ms-meta-hdi_isfolder", "true")
		w.Header().Set("x-ms-resource-type", "directory")
		w.Header().Set("Last-Modified", f.clock.Format(http.TimeFormat))
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
	case r.Method == http.MethodDelete && f.dirs[name]:
		for p := range f.blobs {
			if strings.HasPrefix(p, name+"/") {
				azError(w, http.StatusConflict, "DirectoryIsNotEmpty")
				return
			}
		}
		delete(f.dirs, name)
		w.WriteHeader(http.StatusAccepted)
	case r.Method == http.MethodHead || r.Method == http.MethodGet:
		b := f.blobs[name]
		if b == nil {
			w.Header().Set("x-ms-error-code", "BlobNotFound")
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if b.copyState == "pending" {
			if b.copyPolls--; b.copyPolls < 0 {
				b.copyState = "success"
				if b.copyEnd != "" {
					b.copyState, b.data, b.copyDesc = b.copyEnd, nil, "500 InternalError copying blob"
				}
			}
		}
		h := w.Header()
		h.Set("ETag", b.etag)
		h.Set("Last-Modified", b.mod.Format(http.TimeFormat))
		h.Set("x-ms-blob-type", "BlockBlob")
		if f.hns {
			h.Set("x-ms-resource-type", "file")
		}
		if b.versionID != "" {
			h.Set("x-ms-version-id", b.versionID)
		}
		if b.copyID != "" {
			h.Set("x-ms-copy-id", b.copyID)
			h.Set("x-ms-copy-status", b.copyState)
			if b.copyDesc != "" {
				h.Set("x-ms-copy-status-description", b.copyDesc)
			}
		}
		data := b.data
		status := http.StatusOK
		if rg := r.Header.Get("x-ms-range"); rg != "" && r.Method == http.MethodGet {
			var from, to int
			if _, err := fmt.Sscanf(rg, "bytes=%d-%d", &from, &to); err == nil && from < len(data) {
				to = min(to, len(data)-1)
				h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(data)))
				data, status = data[from:to+1], http.StatusPartialContent
			}
		}
		h.Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(status)
		if r.Method == http.MethodGet {
			w.Write(data)
		}
	case r.Method == http.MethodDelete:
		b := f.blobs[name]
		if b == nil {
			azError(w, http.StatusNotFound, "BlobNotFound")
			return
		}
		if m := r.Header.Get("If-Match"); m != "" && m != b.etag {
			azError(w, http.StatusPreconditionFailed, "ConditionNotMet")
			return
		}
		delete(f.blobs, name)
		switch {
		case f.versioning:
			f.versions = append(f.versions, fakeVersion{name: name, id: b.versionID, data: b.data})
		case f.softDays > 0:
			f.nextID++
			d := fakeDeleted{name: name, data: b.data, at: f.tick()}
			if f.hns {
				d.deletionID = fmt.Sprintf("13265881615650%04d", f.nextID)
			} else {
				// A flat account keeps one soft-deleted base blob per name.
				f.dropDeleted(name)
			}
			f.deleted = append(f.deleted, d)
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		azError(w, http.StatusBadRequest, "UnsupportedHttpVerb")
	}
}

func (f *fakeAccount) dropDeleted(name string) {
	kept := f.deleted[:0]
	for _, d := range f.deleted {
		if d.name != name {
			kept = append(kept, d)
		}
	}
	f.deleted = kept
}

func (f *fakeAccount) rename(w http.ResponseWriter, r *http.Request, dst string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	src, ok := strings.CutPrefix(r.Header.Get("x-ms-rename-source"), "/"+fakeContainer+"/")
	if !ok {
		azError(w, http.StatusBadRequest, "InvalidRenameSourcePath")
		return
	}
	src, err := url.PathUnescape(src)
	if err != nil {
		azError(w, http.StatusBadRequest, "InvalidRenameSourcePath")
		return
	}
	b := f.blobs[src]
	switch {
	case b == nil:
		azError(w, http.StatusNotFound, "SourcePathNotFound")
		return
	case r.Header.Get("If-None-Match") == "*" && (f.blobs[dst] != nil || f.dirs[dst]):
		azError(w, http.StatusConflict, "PathAlreadyExists")
		return
	}
	if f.fileOnTheWay(dst) {
		azError(w, http.StatusConflict, "PathConflict")
		return
	}
	if dir := dst[:max(strings.LastIndexByte(dst, '/'), 0)]; dir != "" && !f.dirs[dir] {
		azError(w, http.StatusNotFound, "RenameDestinationParentPathNotFound")
		return
	}
	f.renames++
	delete(f.blobs, src)
	f.blobs[dst] = b
	w.WriteHeader(http.StatusCreated)
}

// fileOnTheWay reports whether a file stands where a directory on the way to name must be,
// on a hierarchical-namespace account.
func (f *fakeAccount) fileOnTheWay(name string) bool {
	for d := name; f.hns && strings.Contains(d, "/"); {
		d = d[:strings.LastIndexByte(d, '/')]
		if f.blobs[d] != nil {
			return true
		}
	}
	return false
}

// mkdirs creates the directories of name on a hierarchical-namespace account.
func (f *fakeAccount) mkdirs(name string) {
	for d := name; f.hns && strings.Contains(d, "/"); {
		d = d[:strings.LastIndexByte(d, '/')]
		f.dirs[d] = true
	}
}

// write makes data the current blob at name (a new version when versioning is on).
func (f *fakeAccount) write(name string, data []byte) *fakeBlob {
	f.mkdirs(name)
	if old := f.blobs[name]; old != nil && f.versioning {
		f.versions = append(f.versions, fakeVersion{name: name, id: old.versionID, data: old.data})
	}
	f.nextID++
	b := &fakeBlob{data: data, etag: fmt.Sprintf(`"0x%X"`, f.nextID), mod: f.tick()}
	if f.versioning {
		b.versionID = f.newVersionID()
	}
	f.blobs[name] = b
	return b
}

func (f *fakeAccount) serviceProperties(w http.ResponseWriter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.propsStatus != 0 {
		azError(w, f.propsStatus, map[int]string{403: "AuthorizationPermissionMismatch"}[f.propsStatus])
		return
	}
	body := f.propsBody
	if body == "" {
		drp := "<DeleteRetentionPolicy><Enabled>false</Enabled></DeleteRetentionPolicy>"
		if f.softDays > 0 {
			drp = fmt.Sprintf("<DeleteRetentionPolicy><Enabled>true</Enabled><Days>%d</Days></DeleteRetentionPolicy>", f.softDays)
		}
		body = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version></Logging>` + drp + `<DefaultServiceVersion>2023-11-03</DefaultServiceVersion></StorageServiceProperties>`
	}
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, body)
}

// copy serves Copy Blob from a blob (or a version) of this account.
func (f *fakeAccount) copy(w http.ResponseWriter, r *http.Request, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	su, err := url.Parse(r.Header.Get("x-ms-copy-source"))
	if err != nil || !strings.HasPrefix(su.Path, "/acct/"+fakeContainer+"/") {
		azError(w, http.StatusBadRequest, "InvalidHeaderValue")
		return
	}
	src := strings.TrimPrefix(su.Path, "/acct/"+fakeContainer+"/")
	var data []byte
	if vid := su.Query().Get("versionid"); vid != "" {
		found := false
		for _, v := range f.versions {
			if v.name == src && v.id == vid {
				data, found = v.data, true
			}
		}
		if b := f.blobs[src]; b != nil && b.versionID == vid {
			data, found = b.data, true
		}
		if !found {
			azError(w, http.StatusNotFound, "BlobNotFound")
			return
		}
	} else if b := f.blobs[src]; b != nil {
		data = b.data
	} else {
		azError(w, http.StatusNotFound, "BlobNotFound")
		return
	}
	if r.Header.Get("If-None-Match") == "*" && f.blobs[name] != nil {
		azError(w, http.StatusConflict, "BlobAlreadyExists")
		return
	}
	if f.fileOnTheWay(name) {
		azError(w, http.StatusConflict, "PathConflict")
		return
	}
	b := f.write(name, append([]byte(nil), data...))
	f.nextID++
	b.copyID = fmt.Sprintf("copy-%d", f.nextID)
	b.copyState = "success"
	if f.copyPolls > 0 || f.copyEnd != "" {
		b.copyState, b.copyPolls, b.copyEnd = "pending", f.copyPolls, f.copyEnd
	}
	w.Header().Set("ETag", b.etag)
	w.Header().Set("x-ms-copy-id", b.copyID)
	switch f.copyStatus {
	case "":
		w.Header().Set("x-ms-copy-status", b.copyState)
	case "-":
	default:
		w.Header().Set("x-ms-copy-status", f.copyStatus)
	}
	w.WriteHeader(http.StatusAccepted)
}

func (f *fakeAccount) undelete(w http.ResponseWriter, r *http.Request, name string) {
	src := r.Header.Get("x-ms-undelete-source")
	f.undeletes = append(f.undeletes, src)
	if f.undeleteNoop {
		w.WriteHeader(http.StatusOK)
		return
	}
	want := ""
	if f.hns {
		path, id, ok := strings.Cut(src, "?deletionid=")
		if p, err := url.PathUnescape(path); err != nil || p != name || !ok {
			f.t.Errorf("Undelete Blob of %q on a hierarchical-namespace account with x-ms-undelete-source %q", name, src)
			azError(w, http.StatusBadRequest, "InvalidHeaderValue")
			return
		}
		want = id
		if dir := name[:max(strings.LastIndexByte(name, '/'), 0)]; dir != "" && !f.dirs[dir] {
			f.t.Errorf("Undelete Blob of %q while its directory is missing", name)
			azError(w, http.StatusNotFound, "PathNotFound")
			return
		}
		if f.blobs[name] != nil {
			azError(w, http.StatusConflict, "PathAlreadyExists")
			return
		}
	} else if f.blobs[name] != nil {
		// A blob that is not soft-deleted: the operation succeeds without any changes.
		w.WriteHeader(http.StatusOK)
		return
	}
	for i, d := range f.deleted {
		if d.name == name && d.deletionID == want {
			f.deleted = append(f.deleted[:i], f.deleted[i+1:]...)
			b := f.write(name, d.data)
			b.mod = d.at
			break
		}
	}
	w.WriteHeader(http.StatusOK)
}

type fakeListBlob struct {
	XMLName          xml.Name `xml:"Blob"`
	Name             string   `xml:"Name"`
	Deleted          bool     `xml:"Deleted,omitempty"`
	VersionID        string   `xml:"VersionId,omitempty"`
	IsCurrentVersion bool     `xml:"IsCurrentVersion,omitempty"`
	DeletionID       string   `xml:"DeletionId,omitempty"`
	Properties       struct {
		LastModified  string `xml:"Last-Modified"`
		Etag          string `xml:"Etag"`
		ContentLength int    `xml:"Content-Length"`
		BlobType      string `xml:"BlobType"`
		DeletedTime   string `xml:"DeletedTime,omitempty"`
	} `xml:"Properties"`
}

// list serves List Blobs (flat, one page), with include=deleted and include=versions.
func (f *fakeAccount) list(w http.ResponseWriter, q url.Values) {
	f.mu.Lock()
	defer f.mu.Unlock()
	include := map[string]bool{}
	for _, i := range strings.Split(q.Get("include"), ",") {
		include[i] = true
	}
	if include["versions"] && f.refuseVersions {
		azError(w, http.StatusBadRequest, "InvalidQueryParameterValue")
		return
	}
	if include["deleted"] && f.listBody != "" {
		io.WriteString(w, f.listBody)
		return
	}
	prefix := q.Get("prefix")
	var items []fakeListBlob
	add := func(name string, data []byte, mod time.Time, fill func(*fakeListBlob)) {
		if !strings.HasPrefix(name, prefix) {
			return
		}
		it := fakeListBlob{Name: name}
		it.Properties.LastModified = mod.Format(http.TimeFormat)
		it.Properties.Etag = "0x1"
		it.Properties.ContentLength = len(data)
		it.Properties.BlobType = "BlockBlob"
		fill(&it)
		items = append(items, it)
	}
	for name, b := range f.blobs {
		add(name, b.data, b.mod, func(it *fakeListBlob) {
			if include["versions"] && b.versionID != "" {
				it.VersionID, it.IsCurrentVersion = b.versionID, true
			}
		})
	}
	if include["versions"] {
		for _, v := range f.versions {
			add(v.name, v.data, f.clock, func(it *fakeListBlob) { it.VersionID = v.id })
		}
	}
	if include["deleted"] {
		for _, d := range f.deleted {
			add(d.name, d.data, d.at, func(it *fakeListBlob) {
				it.Deleted, it.DeletionID = true, d.deletionID
				it.Properties.DeletedTime = d.at.Format(http.TimeFormat)
			})
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Name != items[j].Name {
			return items[i].Name < items[j].Name
		}
		return items[i].VersionID < items[j].VersionID
	})
	var buf strings.Builder
	buf.WriteString(`<?xml version="1.0" encoding="utf-8"?><EnumerationResults ContainerName="` + fakeContainer + `"><Prefix>` + xmlEscape(prefix) + `</Prefix><Blobs>`)
	for _, it := range items {
		b, _ := xml.Marshal(it)
		buf.Write(b)
	}
	buf.WriteString("</Blobs><NextMarker/></EnumerationResults>")
	w.Header().Set("Content-Type", "application/xml")
	io.WriteString(w, buf.String())
}
