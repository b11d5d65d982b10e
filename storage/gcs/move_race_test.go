package gcs_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/gcs"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

type afterRewrite struct {
	base http.RoundTripper
	hook func()
	done atomic.Bool
}

func (a *afterRewrite) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.base.RoundTrip(r)
	if err == nil && strings.Contains(r.URL.Path, "/rewriteTo/") && a.done.CompareAndSwap(false, true) {
		a.hook()
	}
	return resp, err
}

// TestMoveNeverDeletesAWriteMadeAfterTheCopy: Move (the trash of a --trash run, and undo)
// deletes the source on the condition that it is the generation copied: a write that lands
// between the copy and the delete stays, the copy is removed, and the move fails as changed.
func TestMoveNeverDeletesAWriteMadeAfterTheCopy(t *testing.T) {
	ctx := context.Background()
	cfg := storagetest.GCSConfig(t)
	cfg.Endpoint = storagetest.NewGCSProxy(t, cfg.Endpoint).Endpoint
	plain := storagetest.NewGCSConfig(t, cfg)
	if err := plain.Put(ctx, "a.parquet", []byte("first")); err != nil {
		t.Fatal(err)
	}
	wcfg := cfg
	wcfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return &afterRewrite{base: rt, hook: func() {
			if err := plain.Put(context.Background(), "a.parquet", []byte("second, written by a writer")); err != nil {
				t.Error(err)
			}
		}}
	}
	st, err := gcs.New(ctx, wcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	merr := st.Move(ctx, "a.parquet", "_trash/a.parquet")
	moved, _ := storage.ReadAll(ctx, plain, "_trash/a.parquet")
	live, lerr := storage.ReadAll(ctx, plain, "a.parquet")
	if errors.Is(lerr, storage.ErrNotExist) {
		t.Fatalf("Move = %v; trash holds %q; the second write is gone from a.parquet and is nowhere", merr, moved)
	}
	if string(live) != "second, written by a writer" || !errors.Is(merr, storage.ErrChanged) || moved != nil {
		t.Errorf("Move = %v; live %q; trash %q: want the second write in place, no copy, ErrChanged", merr, live, moved)
	}
}
