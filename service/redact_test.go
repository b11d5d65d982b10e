package service

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deltavacuum/deltavacuum/service/config"
	"github.com/deltavacuum/deltavacuum/service/state"
)

// TestSecretsNotRendered: a secret storage option and the token, read from the environment,
// are masked in responses, errors and log lines, whatever carries them there.
func TestSecretsNotRendered(t *testing.T) {
	const secret, token = "wJalrXUtnFEMI-K7MDENG-bPxRfiCY", "tok-0123456789abcdef"
	dir := t.TempDir()
	db, err := state.Open(context.Background(), filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg, err := config.Parse([]byte(`dataDir: /s
token: ${T}
tables:
  - {id: a, path: 's3://bucket/a', storageOptions: {aws_access_key_id: '${K}', aws_secret_access_key: '${S}'}}
`), "m.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"T": token, "K": "AKIDEXAMPLE", "S": secret}
	var logs bytes.Buffer
	srv, err := New(Options{Config: cfg, State: db, Getenv: func(k string) string { return env[k] },
		Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/tables/a/inspect", nil)
	srv.failCode(rec, req, 502, errors.New("the store said: bad signature for "+secret+" (token "+token+")"))
	srv.Log.Warn("carrying "+secret, "token", token, "nested", slog.GroupValue(slog.String("k", secret)))
	for what, out := range map[string]string{"response": rec.Body.String(), "log": logs.String()} {
		if strings.Contains(out, secret) || strings.Contains(out, token) {
			t.Errorf("the %s renders a secret: %s", what, out)
		}
		if !strings.Contains(out, "redacted") {
			t.Errorf("the %s shows no mask: %s", what, out)
		}
	}
}
