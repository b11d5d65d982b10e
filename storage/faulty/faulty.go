// Package faulty injects the faults of real object stores into the HTTP requests of a backend:
// throttling (S3 503 SlowDown, Azure 503 ServerBusy, GCS 429), server errors (500),
// connection resets before or after the server got the request, and batch deletes that fail
// half their keys. It is an http.RoundTripper, set with the backends' WrapTransport, so the
// SDKs' own retry and batch code runs against the real test servers.
//
//	ft := faulty.New(faulty.Rule{Fault: faulty.Throttle, Every: 2})
//	cfg := storagetest.S3Config(t)
//	cfg.WrapTransport = ft.Wrap
package faulty

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/deltavacuum/deltavacuum/storage/counting"
)

// Fault is a kind of fault.
type Fault int

// The faults.
const (
	// Throttle answers without reaching the server: S3 503 SlowDown, Azure 503 ServerBusy,
	// GCS 429 rateLimitExceeded.
	Throttle Fault = iota
	// ServerError answers 500 InternalError (GCS backendError) without reaching the server.
	ServerError
	// ResetBefore fails the request with a connection reset before it reaches the server.
	ResetBefore
	// ResetAfter sends the request to the server, then fails it with a connection reset: the
	// client cannot know whether it took effect.
	ResetAfter
	// HalfBatch fails every other key of a batch delete (S3 DeleteObjects, Azure Blob Batch)
	// with Rule.KeyStatus/KeyCode, in the response (the server ran the whole batch). On GCS,
	// which has no batches, it fails every other single delete without reaching the server.
	HalfBatch
	// Respond answers Rule.Status with error code Rule.Code without reaching the server (for
	// example a 400 to batch requests, as OneLake answers them).
	Respond
)

func (f Fault) String() string {
	switch f {
	case Throttle:
		return "throttle"
	case ServerError:
		return "server error"
	case ResetBefore:
		return "reset before"
	case ResetAfter:
		return "reset after"
	case HalfBatch:
		return "half batch"
	case Respond:
		return "respond"
	}
	return "fault " + strconv.Itoa(int(f))
}

// Rule injects one fault into the requests it matches.
type Rule struct {
	Fault Fault
	// Match selects the requests (nil: all). See Batch, Deletes, Kinds.
	Match func(*http.Request) bool
	// Every injects into every Nth matching request, the first of them included (0 or 1: each).
	Every int
	// Times is the most injections (0: no limit).
	Times int
	// Attempts, when > 0, makes the rule deterministic under retries: requests are told apart
	// by method, URL and body, Every picks among distinct requests, and a picked request fails
	// its first Attempts tries, then goes through.
	Attempts int
	// KeyStatus and KeyCode are the per-key failure of HalfBatch: by default 503 SlowDown
	// (S3), 503 ServerBusy (Azure), 503 (GCS), which the store retries. A 403 (AccessDenied,
	// AuthorizationFailure) is permanent.
	KeyStatus int
	KeyCode   string
	// Status and Code are the answer of Respond.
	Status int
	Code   string
}

// Batch matches batch delete requests (S3 POST ?delete, Azure POST ?comp=batch).
func Batch(r *http.Request) bool {
	q := r.URL.Query()
	return r.Method == http.MethodPost && (q.Has("delete") || q.Get("comp") == "batch")
}

// Deletes matches every delete request, batch or single.
func Deletes(r *http.Request) bool { return counting.Classify(r) == counting.Delete }

// Kinds matches the requests of the given kinds.
func Kinds(kinds ...counting.Kind) func(*http.Request) bool {
	return func(r *http.Request) bool {
		k := counting.Classify(r)
		for _, want := range kinds {
			if k == want {
				return true
			}
		}
		return false
	}
}

type rule struct {
	Rule
	seen, injected int
	tries          map[string]int // request identity -> faulted tries left (-1: not picked)
}

// Transport is the fault-injecting http.RoundTripper. It is safe for concurrent use.
type Transport struct {
	// Base carries the requests (http.DefaultTransport when nil).
	Base http.RoundTripper

	mu         sync.Mutex
	rules      []*rule
	injected   map[Fault]int
	failedKeys []string
	requests   int
}

// New returns a transport injecting rules (the first matching rule whose turn it is wins).
func New(rules ...Rule) *Transport {
	t := &Transport{injected: map[Fault]int{}}
	for _, r := range rules {
		t.rules = append(t.rules, &rule{Rule: r})
	}
	return t
}

// Wrap sets base as the transport's Base and returns the transport: pass it as a backend's
// WrapTransport.
func (t *Transport) Wrap(base http.RoundTripper) http.RoundTripper {
	t.Base = base
	return t
}

// Injected returns how many times f was injected.
func (t *Transport) Injected(f Fault) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.injected[f]
}

// Requests returns how many requests went through the transport.
func (t *Transport) Requests() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.requests
}

// FailedKeys returns the objects HalfBatch failed, in order: object names (S3, GCS), or the
// unescaped URL paths of the Azure sub-requests (/[account/]container/name).
func (t *Transport) FailedKeys() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.failedKeys...)
}

// Disable stops all injections.
func (t *Transport) Disable() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rules = nil
}

// identity tells requests apart for Rule.Attempts: method, URL and a hash of the body.
func identity(r *http.Request) string {
	id := r.Method + " " + r.URL.String()
	if r.Body == nil || r.Body == http.NoBody {
		return id
	}
	b, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return id
	}
	sum := sha256.Sum256(b)
	return id + " " + hex.EncodeToString(sum[:])
}

func (t *Transport) pick(r *http.Request) *rule {
	id := ""
	for _, ru := range t.rules {
		if ru.Attempts > 0 {
			id = identity(r)
			break
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.requests++
	for _, ru := range t.rules {
		if ru.Match != nil && !ru.Match(r) {
			continue
		}
		if ru.Fault == HalfBatch && dialect(r) != gcsAPI && !Batch(r) {
			continue
		}
		if ru.Fault == HalfBatch && dialect(r) == gcsAPI && r.Method != http.MethodDelete {
			continue
		}
		if ru.Times > 0 && ru.injected >= ru.Times {
			continue
		}
		if ru.Attempts > 0 {
			if ru.tries == nil {
				ru.tries = map[string]int{}
			}
			left, ok := ru.tries[id]
			if !ok {
				ru.seen++
				left = -1
				if ru.Every <= 1 || (ru.seen-1)%ru.Every == 0 {
					left = ru.Attempts
				}
			}
			if left <= 0 {
				ru.tries[id] = left
				continue
			}
			ru.tries[id] = left - 1
			ru.injected++
			t.injected[ru.Fault]++
			return ru
		}
		ru.seen++
		if ru.Every > 1 && (ru.seen-1)%ru.Every != 0 {
			continue
		}
		ru.injected++
		t.injected[ru.Fault]++
		return ru
	}
	return nil
}

func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	ru := t.pick(r)
	if ru == nil {
		return t.base().RoundTrip(r)
	}
	switch ru.Fault {
	case Throttle:
		closeBody(r)
		return errorResponse(r, throttleStatus(r), throttleCode(r), "injected throttling"), nil
	case ServerError:
		closeBody(r)
		return errorResponse(r, http.StatusInternalServerError, serverErrorCode(r), "injected server error"), nil
	case ResetBefore:
		closeBody(r)
		return nil, resetError()
	case ResetAfter:
		resp, err := t.base().RoundTrip(r)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body) // drained only to reuse the connection
			resp.Body.Close()
		}
		return nil, resetError()
	case HalfBatch:
		return t.halfBatch(r, ru)
	case Respond:
		closeBody(r)
		return errorResponse(r, ru.Status, ru.Code, "injected response"), nil
	}
	return t.base().RoundTrip(r)
}

func closeBody(r *http.Request) {
	if r.Body != nil {
		r.Body.Close()
	}
}

func resetError() error {
	return &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

type api int

const (
	s3API api = iota
	azureAPI
	gcsAPI
)

func dialect(r *http.Request) api {
	for k := range r.Header {
		if strings.EqualFold(k, "x-ms-version") {
			return azureAPI
		}
	}
	if q := r.URL.Query(); q.Has("comp") || q.Has("restype") || strings.HasPrefix(r.Header.Get("Authorization"), "SharedKey ") {
		return azureAPI
	}
	p := r.URL.EscapedPath()
	if strings.HasPrefix(p, "/storage/v1/") || strings.HasPrefix(p, "/upload/storage/v1/") || strings.HasPrefix(p, "/download/storage/v1/") || strings.HasPrefix(p, "/batch/storage/v1") {
		return gcsAPI
	}
	return s3API
}

func throttleStatus(r *http.Request) int {
	if dialect(r) == gcsAPI {
		return http.StatusTooManyRequests
	}
	return http.StatusServiceUnavailable
}

func throttleCode(r *http.Request) string {
	switch dialect(r) {
	case azureAPI:
		return "ServerBusy"
	case gcsAPI:
		return "rateLimitExceeded"
	}
	return "SlowDown"
}

func serverErrorCode(r *http.Request) string {
	if dialect(r) == gcsAPI {
		return "backendError"
	}
	return "InternalError"
}

// errorResponse is the error answer of r's API.
func errorResponse(r *http.Request, status int, code, msg string) *http.Response {
	h := http.Header{}
	var body string
	switch dialect(r) {
	case gcsAPI:
		h.Set("Content-Type", "application/json; charset=UTF-8")
		body = fmt.Sprintf(`{"error":{"code":%d,"message":%q,"errors":[{"domain":"global","reason":%q,"message":%q}]}}`, status, msg, code, msg)
	case azureAPI:
		h.Set("Content-Type", "application/xml")
		h.Set("x-ms-error-code", code)
		h.Set("x-ms-request-id", "faulty")
		body = fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
	default:
		h.Set("Content-Type", "application/xml")
		h.Set("x-amz-request-id", "faulty")
		body = fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message><RequestId>faulty</RequestId></Error>`, code, msg)
	}
	if r.Method == http.MethodHead {
		body = ""
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}
}

func (t *Transport) halfBatch(r *http.Request, ru *rule) (*http.Response, error) {
	status, code := ru.KeyStatus, ru.KeyCode
	if status == 0 {
		status = http.StatusServiceUnavailable
	}
	switch dialect(r) {
	case gcsAPI:
		// A single delete: fail every other one without reaching the server.
		closeBody(r)
		if code == "" {
			code = "backendError"
		}
		t.recordFailed(gcsObjectName(r))
		return errorResponse(r, status, code, "injected per-key failure"), nil
	case azureAPI:
		if code == "" {
			code = "ServerBusy"
		}
		return t.halfAzureBatch(r, status, code)
	default:
		if code == "" {
			code = "SlowDown"
		}
		return t.halfS3Batch(r, code)
	}
}

func (t *Transport) recordFailed(names ...string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failedKeys = append(t.failedKeys, names...)
}

func gcsObjectName(r *http.Request) string {
	p := r.URL.EscapedPath()
	if i := strings.Index(p, "/o/"); i >= 0 {
		if name, err := url.PathUnescape(p[i+3:]); err == nil {
			return name
		}
	}
	return p
}

// S3 DeleteObjects result.
type s3DeleteResult struct {
	XMLName xml.Name     `xml:"DeleteResult"`
	Xmlns   string       `xml:"xmlns,attr,omitempty"`
	Deleted []s3Deleted  `xml:"Deleted"`
	Errors  []s3KeyError `xml:"Error"`
}

type s3Deleted struct {
	Key                   string `xml:"Key"`
	VersionID             string `xml:"VersionId,omitempty"`
	DeleteMarker          string `xml:"DeleteMarker,omitempty"`
	DeleteMarkerVersionID string `xml:"DeleteMarkerVersionId,omitempty"`
}

type s3KeyError struct {
	Key       string `xml:"Key"`
	VersionID string `xml:"VersionId,omitempty"`
	Code      string `xml:"Code"`
	Message   string `xml:"Message"`
}

func (t *Transport) halfS3Batch(r *http.Request, code string) (*http.Response, error) {
	resp, err := t.base().RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var res s3DeleteResult
	if err := xml.Unmarshal(body, &res); err != nil {
		return nil, fmt.Errorf("faulty: reading the DeleteObjects response: %w", err)
	}
	res.Xmlns = "http://s3.amazonaws.com/doc/2006-03-01/"
	var keep []s3Deleted
	var failed []string
	for i, d := range res.Deleted {
		if i%2 == 1 {
			keep = append(keep, d)
			continue
		}
		res.Errors = append(res.Errors, s3KeyError{Key: d.Key, Code: code, Message: "injected per-key failure"})
		failed = append(failed, d.Key)
	}
	res.Deleted = keep
	t.recordFailed(failed...)
	out, err := xml.Marshal(res)
	if err != nil {
		return nil, err
	}
	out = append([]byte(xml.Header), out...)
	return withBody(resp, out), nil
}

func withBody(resp *http.Response, body []byte) *http.Response {
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	resp.Header.Del("Content-Md5")
	resp.TransferEncoding = nil
	return resp
}

// halfAzureBatch runs the batch, then replaces every other sub-response with a failure.
func (t *Transport) halfAzureBatch(r *http.Request, status int, code string) (*http.Response, error) {
	// The blob names of the sub-requests, by Content-ID.
	names := map[string]string{}
	if r.Body != nil {
		reqBody, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
		if _, params, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err == nil {
			mr := multipart.NewReader(bytes.NewReader(reqBody), params["boundary"])
			for {
				part, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(part)
				line, _, _ := strings.Cut(string(b), "\r\n")
				if f := strings.Fields(line); len(f) >= 2 {
					p := f[1]
					if u, err := url.Parse(p); err == nil {
						p = u.Path // unescaped
					}
					names[part.Header.Get("Content-ID")] = p
				}
			}
		}
	}
	resp, err := t.base().RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusAccepted {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("faulty: batch response: %w", err)
	}
	boundary := params["boundary"]
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var out bytes.Buffer
	mw := multipart.NewWriter(&out)
	if err := mw.SetBoundary(boundary); err != nil {
		return nil, err
	}
	var failed []string
	for i := 0; ; i++ {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("faulty: batch response: %w", err)
		}
		content, err := io.ReadAll(part)
		if err != nil {
			return nil, err
		}
		h := textproto.MIMEHeader{}
		for k, v := range part.Header {
			h[k] = v
		}
		if i%2 == 0 {
			msg := fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>injected per-key failure</Message></Error>`, code)
			content = []byte(fmt.Sprintf("HTTP/1.1 %d %s\r\nx-ms-error-code: %s\r\nx-ms-request-id: faulty\r\nx-ms-version: 2021-12-02\r\nContent-Length: %d\r\nContent-Type: application/xml\r\n\r\n%s\r\n",
				status, http.StatusText(status), code, len(msg), msg))
			if n, ok := names[part.Header.Get("Content-ID")]; ok {
				failed = append(failed, n)
			}
		}
		pw, err := mw.CreatePart(h)
		if err != nil {
			return nil, err
		}
		_, _ = pw.Write(content) // a failed write shows as a short body to the reader
	}
	mw.Close()
	t.recordFailed(failed...)
	return withBody(resp, out.Bytes()), nil
}
