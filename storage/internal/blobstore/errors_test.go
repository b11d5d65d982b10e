package blobstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestSafeError(t *testing.T) {
	// A real failed request: Go's client quotes the whole URL, the query (a SAS) included.
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://127.0.0.1:1/acct/c?comp=list&sv=2022-11-02&sig=SECRET%2Bsig%3D", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, reqErr := http.DefaultClient.Do(req)
	if reqErr == nil || !strings.Contains(reqErr.Error(), "SECRET") {
		t.Fatalf("the premise fails: %v", reqErr)
	}
	for _, e := range []error{
		reqErr,
		fmt.Errorf("azure list _delta_log/: %w", reqErr),
		errors.Join(errors.New("first"), fmt.Errorf("second: %w", reqErr)),
		&url.Error{Op: "Get", URL: "https://user:SECRETPW@acct.blob.core.windows.net/c?sig=SECRET", Err: errors.New("boom")},
		&url.Error{Op: "parse", URL: "http://[bad?sig=SECRET", Err: errors.New("boom")},
	} {
		got := SafeError(e)
		if strings.Contains(got.Error(), "SECRET") {
			t.Errorf("SafeError(%v) = %v", e, got)
		}
		if !errors.Is(got, e) {
			t.Errorf("SafeError(%v) does not unwrap to it", e)
		}
	}
	var ne net.Error
	if !errors.As(SafeError(reqErr), &ne) {
		t.Error("a connection error is no longer a net.Error (retries would stop)")
	}
	if !strings.Contains(SafeError(reqErr).Error(), `"http://127.0.0.1:1/acct/c"`) {
		t.Errorf("the URL without its query should remain: %v", SafeError(reqErr))
	}
	plain := errors.New("no URL here")
	if SafeError(plain) != plain || SafeError(nil) != nil {
		t.Error("an error with nothing to strip must be returned as is")
	}
}
