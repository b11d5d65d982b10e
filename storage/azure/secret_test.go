package azure

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

// A failed request's error does not quote the SAS of its URL (Go's url.Error quotes the
// whole URL), and still is a connection error for the retry logic.
func TestErrorsHideSAS(t *testing.T) {
	st, err := New(context.Background(), Config{
		ServiceURL:  "http://127.0.0.1:1/acct", // a closed loopback port
		Container:   "c",
		SASToken:    "sv=2022-11-02&sr=c&sp=rl&sig=SECRETSIG%2Babc%3D",
		AllowHTTP:   true,
		MaxAttempts: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = st.Stat(context.Background(), "_delta_log/00000000000000000000.json")
	if err == nil {
		t.Fatal("Stat on a closed port succeeded")
	}
	if strings.Contains(err.Error(), "SECRETSIG") || strings.Contains(err.Error(), "sig=") {
		t.Errorf("the error shows the SAS: %v", err)
	}
	var ne net.Error
	if !errors.As(err, &ne) || !st.b.Retryable(err) {
		t.Errorf("the error is no longer a retryable connection error: %v", err)
	}
	for _, cfg := range []Config{
		{ServiceURL: "http://user:SECRETPW@127.0.0.1:1/acct", Container: "c", AllowHTTP: true, Anonymous: true},
		{ServiceURL: "http://127.0.0.1:1/acct?sig=SECRETSIG", Container: "c", AllowHTTP: true, Anonymous: true},
		{ServiceURL: "http://127.0.0.1:1/acct", DFSURL: "http://user:SECRETPW@127.0.0.1:1/acct", Container: "c", AllowHTTP: true, Anonymous: true},
		{ServiceURL: "http://127.0.0.1:1/acct", DFSURL: "http://127.0.0.1:1/acct?sig=SECRETSIG", Container: "c", AllowHTTP: true, Anonymous: true},
		{ServiceURL: "https://127.0.0.1:1/acct", DFSURL: "http://127.0.0.1:1/acct", Container: "c", Anonymous: true},
	} {
		if _, err := New(context.Background(), cfg); err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("New(%v): %v", cfg, err)
		}
	}
}
