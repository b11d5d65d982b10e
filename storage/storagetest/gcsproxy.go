package storagetest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// GCSPreconditionFailed is the body GCS answers a request whose generation precondition does
// not hold with (HTTP 412), as the JSON API documents it.
const GCSPreconditionFailed = `{"error":{"code":412,"message":"At least one of the pre-conditions you specified did not hold.","errors":[{"message":"At least one of the pre-conditions you specified did not hold.","domain":"global","reason":"conditionNotMet","locationType":"header","location":"If-Match"}]}}`

// GCSProxy stands in front of fake-gcs-server and enforces the generation preconditions it
// ignores (v1.56: ifGenerationMatch on an object delete, and on the destination of a copy or
// rewrite), answering 412 as GCS does; everything else is passed on. It records the requests.
type GCSProxy struct {
	// Endpoint is the proxy's URL, for gcs.Config.Endpoint.
	Endpoint string

	upstream string
	mu       sync.Mutex
	requests []string
}

// NewGCSProxy starts a proxy in front of the GCS test server at upstream, closed when the test
// ends.
func NewGCSProxy(t *testing.T, upstream string) *GCSProxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &GCSProxy{upstream: strings.TrimSuffix(upstream, "/")}
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.requests = append(p.requests, r.Method+" "+r.URL.RequestURI())
		p.mu.Unlock()
		if p.refuse(r) {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.WriteHeader(http.StatusPreconditionFailed)
			io.WriteString(w, GCSPreconditionFailed)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.Endpoint = srv.URL
	return p
}

// Requests returns the requests received so far, as "METHOD /path?query".
func (p *GCSProxy) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

// refuse reports whether r carries an ifGenerationMatch that the object it names (a delete's
// object, a copy's destination) does not satisfy.
func (p *GCSProxy) refuse(r *http.Request) bool {
	cond := r.URL.Query().Get("ifGenerationMatch")
	if cond == "" {
		return false
	}
	want, err := strconv.ParseInt(cond, 10, 64)
	if err != nil {
		return true
	}
	path := r.URL.EscapedPath()
	var object string // the escaped /storage/v1/b/B/o/NAME whose generation must match
	switch {
	case r.Method == http.MethodDelete && strings.HasPrefix(path, "/storage/v1/b/"):
		object = path
	case r.Method == http.MethodPost && strings.HasPrefix(path, "/storage/v1/b/"):
		for _, op := range []string{"/rewriteTo/", "/copyTo/"} {
			if i := strings.Index(path, op); i >= 0 {
				object = "/storage/v1/" + path[i+len(op):]
			}
		}
	}
	if object == "" {
		return false
	}
	have, err := p.generation(object)
	if err != nil || (have == 0 && r.Method == http.MethodDelete) {
		return false // let the server answer (404 for a missing object)
	}
	return have != want
}

// generation is the live generation of the object at the escaped path (0: none).
func (p *GCSProxy) generation(path string) (int64, error) {
	resp, err := http.Get(p.upstream + path)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return 0, nil
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: %s", path, resp.Status)
	}
	var o struct {
		Generation string `json:"generation"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil {
		return 0, err
	}
	return strconv.ParseInt(o.Generation, 10, 64)
}
