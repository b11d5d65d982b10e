package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage"
	"github.com/deltavacuum/deltavacuum/storage/counting"
	"github.com/deltavacuum/deltavacuum/storage/faulty"
	"github.com/deltavacuum/deltavacuum/storage/storagetest"
)

type store interface {
	storage.Store
	counting.RequestCounter
	BatchDisabled() bool
}

type server struct {
	name        string
	batches     bool // has batch deletes
	reportsGone bool
}

var servers = []server{{"s3", true, false}, {"azure", true, true}, {"gcs", false, true}}

type opts struct {
	batch, attempts int
}

// open returns a store on the named test server (skipping when it is not configured), with
// its HTTP requests going through ft.
func open(t *testing.T, name string, ft *faulty.Transport, o opts) store {
	t.Helper()
	switch name {
	case "s3":
		cfg := storagetest.S3Config(t)
		cfg.WrapTransport, cfg.BatchSize, cfg.MaxAttempts = ft.Wrap, o.batch, o.attempts
		return storagetest.NewS3Config(t, cfg)
	case "azure":
		cfg := storagetest.AzureConfig(t)
		cfg.WrapTransport, cfg.BatchSize, cfg.MaxAttempts = ft.Wrap, o.batch, o.attempts
		return storagetest.NewAzureConfig(t, cfg)
	case "gcs":
		cfg := storagetest.GCSConfig(t)
		cfg.WrapTransport, cfg.MaxAttempts = ft.Wrap, o.attempts
		return storagetest.NewGCSConfig(t, cfg)
	}
	t.Fatalf("unknown server %q", name)
	return nil
}

func forEach(t *testing.T, fn func(t *testing.T, sv server)) {
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) { fn(t, sv) })
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func keys(n int) []string {
	var ks []string
	for i := range n {
		ks = append(ks, fmt.Sprintf("p=%d/part-%03d.parquet", i%4, i))
	}
	return ks
}

func putAll(t *testing.T, s storage.Store, ks []string) {
	t.Helper()
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make([]error, len(ks))
	for i, k := range ks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Put(ctx, k, []byte("data of "+k))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Put(%q): %v", ks[i], err)
		}
	}
}

func files(t *testing.T, s storage.Store) map[string]bool {
	t.Helper()
	got := map[string]bool{}
	err := s.Walk(ctxT(t), "", func(o storage.Object) error {
		if !o.IsDir {
			got[o.Key] = true
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	return got
}

// tally counts the results as vacuum does: deleted, gone, failed.
func tally(t *testing.T, keys []string, res []storage.DeleteResult) (deleted, gone, failed int) {
	t.Helper()
	if len(res) != len(keys) {
		t.Fatalf("%d results for %d keys", len(res), len(keys))
	}
	for i, r := range res {
		if r.Key != keys[i] {
			t.Fatalf("result %d is for %q, want %q", i, r.Key, keys[i])
		}
		switch {
		case r.Err != nil:
			if r.Gone {
				t.Errorf("%q: both failed and gone", r.Key)
			}
			failed++
		case r.Gone:
			gone++
		default:
			deleted++
		}
	}
	return
}

// A full round of operations under throttling and 500s: every one succeeds, after retries.
func TestThrottlingAndServerErrorsAreRetried(t *testing.T) {
	forEach(t, func(t *testing.T, sv server) {
		ft := faulty.New(
			faulty.Rule{Fault: faulty.Throttle, Every: 2, Attempts: 2},
			faulty.Rule{Fault: faulty.ServerError, Every: 3, Attempts: 1},
		)
		s := open(t, sv.name, ft, opts{batch: 7})
		ctx := ctxT(t)
		ks := keys(20)
		putAll(t, s, ks)
		if got := files(t, s); len(got) != len(ks) {
			t.Fatalf("Walk found %d files, want %d", len(got), len(ks))
		}
		for _, k := range ks[:2] {
			b, err := storage.ReadAll(ctx, s, k)
			if err != nil || string(b) != "data of "+k {
				t.Fatalf("ReadAll(%q) = %q, %v", k, b, err)
			}
		}
		if err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("commit 1")); err != nil {
			t.Fatalf("PutIfAbsent: %v", err)
		}
		if err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("other")); !errors.Is(err, storage.ErrExist) {
			t.Fatalf("second PutIfAbsent: %v, want ErrExist", err)
		}
		ks = append(ks, "_delta_log/00000000000000000001.json")
		res, err := s.Delete(ctx, ks)
		if err != nil {
			t.Fatal(err)
		}
		if deleted, gone, failed := tally(t, ks, res); failed != 0 || deleted+gone != len(ks) {
			t.Fatalf("deleted %d, gone %d, failed %d of %d", deleted, gone, failed, len(ks))
		}
		if ft.Injected(faulty.Throttle) == 0 || ft.Injected(faulty.ServerError) == 0 {
			t.Fatalf("nothing injected: %d throttles, %d server errors", ft.Injected(faulty.Throttle), ft.Injected(faulty.ServerError))
		}
		rc := s.Requests()
		if rc.Total() != int64(ft.Requests()) {
			t.Errorf("the store counted %d requests (%+v), the transport saw %d", rc.Total(), rc, ft.Requests())
		}
		t.Logf("%d throttles and %d server errors injected; requests %+v", ft.Injected(faulty.Throttle), ft.Injected(faulty.ServerError), rc)
		ft.Disable()
		if got := files(t, s); len(got) != 0 {
			t.Fatalf("%d files left after deleting all", len(got))
		}
	})
}

// Connection resets, before the request reaches the server and after it took effect.
func TestConnectionResetsAreRetried(t *testing.T) {
	forEach(t, func(t *testing.T, sv server) {
		ft := faulty.New(
			faulty.Rule{Fault: faulty.ResetBefore, Every: 3, Attempts: 1},
			faulty.Rule{Fault: faulty.ResetAfter, Every: 4, Attempts: 1, Match: faulty.Kinds(counting.Put, counting.Delete)},
		)
		s := open(t, sv.name, ft, opts{batch: 5})
		ctx := ctxT(t)
		ks := keys(24)
		putAll(t, s, ks)
		if got := files(t, s); len(got) != len(ks) {
			t.Fatalf("Walk found %d files, want %d", len(got), len(ks))
		}
		res, err := s.Delete(ctx, ks)
		if err != nil {
			t.Fatal(err)
		}
		deleted, gone, failed := tally(t, ks, res)
		if failed != 0 || deleted+gone != len(ks) {
			t.Fatalf("deleted %d, gone %d, failed %d of %d", deleted, gone, failed, len(ks))
		}
		if ft.Injected(faulty.ResetBefore) == 0 || ft.Injected(faulty.ResetAfter) == 0 {
			t.Fatal("no reset injected")
		}
		t.Logf("resets: %d before, %d after; deleted %d, gone %d (a delete retried after a reset finds the key gone)",
			ft.Injected(faulty.ResetBefore), ft.Injected(faulty.ResetAfter), deleted, gone)
		ft.Disable()
		if got := files(t, s); len(got) != 0 {
			t.Fatalf("%d files left after deleting all", len(got))
		}
	})
}

// A conditional put whose connection is reset after the server stored it: the retry finds the
// key taken, reads it back, and reports the commit as won, not lost.
func TestPutIfAbsentAfterAmbiguousReset(t *testing.T) {
	forEach(t, func(t *testing.T, sv server) {
		ft := faulty.New(faulty.Rule{Fault: faulty.ResetAfter, Times: 1, Match: faulty.Kinds(counting.Put)})
		s := open(t, sv.name, ft, opts{})
		ctx := ctxT(t)
		key := "_delta_log/00000000000000000003.json"
		if err := s.PutIfAbsent(ctx, key, []byte("my commit")); err != nil {
			t.Fatalf("PutIfAbsent after a reset that landed: %v", err)
		}
		if ft.Injected(faulty.ResetAfter) != 1 {
			t.Fatal("the reset was not injected")
		}
		if err := s.PutIfAbsent(ctx, key, []byte("another commit")); !errors.Is(err, storage.ErrExist) {
			t.Fatalf("PutIfAbsent of a taken key: %v, want ErrExist", err)
		}
		b, err := storage.ReadAll(ctx, s, key)
		if err != nil || string(b) != "my commit" {
			t.Fatalf("content %q, %v", b, err)
		}
	})
}

// Batches that fail half their keys with a retryable error (503 SlowDown / ServerBusy): the
// store retries those keys, and every key ends up deleted.
func TestHalfBatchRetried(t *testing.T) {
	forEach(t, func(t *testing.T, sv server) {
		ft := faulty.New(faulty.Rule{Fault: faulty.HalfBatch, Times: 4})
		s := open(t, sv.name, ft, opts{batch: 10})
		ks := keys(40)
		putAll(t, s, ks)
		res, err := s.Delete(ctxT(t), ks)
		if err != nil {
			t.Fatal(err)
		}
		deleted, gone, failed := tally(t, ks, res)
		if failed != 0 || deleted+gone != len(ks) {
			t.Fatalf("deleted %d, gone %d, failed %d of %d", deleted, gone, failed, len(ks))
		}
		if len(ft.FailedKeys()) == 0 {
			t.Fatal("no key failed")
		}
		if s.BatchDisabled() != !sv.batches {
			t.Errorf("BatchDisabled = %v", s.BatchDisabled())
		}
		ft.Disable()
		if got := files(t, s); len(got) != 0 {
			t.Fatalf("%d files left", len(got))
		}
	})
}

// Batches that fail half their keys for good (403): exactly those keys are reported failed,
// none of them counted as deleted.
func TestHalfBatchPermanentFailuresReported(t *testing.T) {
	forEach(t, func(t *testing.T, sv server) {
		code := map[string]string{"s3": "AccessDenied", "azure": "AuthorizationFailure", "gcs": "forbidden"}[sv.name]
		ft := faulty.New(faulty.Rule{Fault: faulty.HalfBatch, KeyStatus: http.StatusForbidden, KeyCode: code})
		s := open(t, sv.name, ft, opts{batch: 10})
		ks := keys(40)
		putAll(t, s, ks)
		res, err := s.Delete(ctxT(t), ks)
		if err != nil {
			t.Fatal(err)
		}
		deleted, gone, failed := tally(t, ks, res)
		failedNames := ft.FailedKeys()
		isFailed := func(k string) bool {
			for _, n := range failedNames {
				if n == k || strings.HasSuffix(n, "/"+k) {
					return true
				}
			}
			return false
		}
		if failed == 0 || failed != len(failedNames) {
			t.Fatalf("%d keys reported failed, %d failed by the server", failed, len(failedNames))
		}
		for _, r := range res {
			if (r.Err != nil) != isFailed(r.Key) {
				t.Errorf("%q: reported %+v, failed by the server: %v", r.Key, r, isFailed(r.Key))
			}
			if r.Err != nil && !strings.Contains(r.Err.Error(), code) && !strings.Contains(r.Err.Error(), "403") {
				t.Errorf("%q: error %q names neither %s nor 403", r.Key, r.Err, code)
			}
		}
		if deleted+gone+failed != len(ks) || gone != 0 {
			t.Fatalf("deleted %d, gone %d, failed %d of %d", deleted, gone, failed, len(ks))
		}
		if sv.name == "gcs" {
			// The failed deletes never reached the server: the files are still there.
			ft.Disable()
			left := files(t, s)
			for _, r := range res {
				if r.Err != nil && !left[r.Key] {
					t.Errorf("%q reported failed but gone", r.Key)
				}
				if r.Err == nil && left[r.Key] {
					t.Errorf("%q reported deleted but still there", r.Key)
				}
			}
		}
	})
}

// A batch request that fails as a whole, every attempt: every key is reported failed, and
// none was deleted.
func TestWholeBatchFailureReported(t *testing.T) {
	forEach(t, func(t *testing.T, sv server) {
		if !sv.batches {
			t.Skip("no batches")
		}
		ft := faulty.New(faulty.Rule{Fault: faulty.ServerError, Match: faulty.Batch})
		s := open(t, sv.name, ft, opts{batch: 10, attempts: 3})
		ks := keys(15)
		putAll(t, s, ks)
		res, err := s.Delete(ctxT(t), ks)
		if err != nil {
			t.Fatal(err)
		}
		if deleted, gone, failed := tally(t, ks, res); failed != len(ks) {
			t.Fatalf("deleted %d, gone %d, failed %d of %d", deleted, gone, failed, len(ks))
		}
		if got := ft.Injected(faulty.ServerError); got != 2*3 {
			t.Errorf("%d batch attempts failed, want 6 (2 batches x 3 attempts)", got)
		}
		ft.Disable()
		if got := files(t, s); len(got) != len(ks) {
			t.Fatalf("%d files left, want all %d", len(got), len(ks))
		}
	})
}

// A store that refuses batch requests (OneLake answers 400, some S3-compatible stores 501):
// the store falls back to single deletes by itself.
func TestBatchRefusedFallsBackToSingles(t *testing.T) {
	forEach(t, func(t *testing.T, sv server) {
		if !sv.batches {
			t.Skip("no batches")
		}
		rule := faulty.Rule{Fault: faulty.Respond, Match: faulty.Batch, Status: http.StatusBadRequest, Code: "BadRequest"}
		if sv.name == "s3" {
			rule.Status, rule.Code = http.StatusNotImplemented, "NotImplemented"
		}
		ft := faulty.New(rule)
		s := open(t, sv.name, ft, opts{batch: 10})
		ks := keys(25)
		putAll(t, s, ks)
		res, err := s.Delete(ctxT(t), ks)
		if err != nil {
			t.Fatal(err)
		}
		if deleted, gone, failed := tally(t, ks, res); deleted != len(ks) {
			t.Fatalf("deleted %d, gone %d, failed %d of %d", deleted, gone, failed, len(ks))
		}
		if !s.BatchDisabled() {
			t.Error("batches still enabled after a refusal")
		}
		if got := ft.Injected(faulty.Respond); got == 0 || got > 3 {
			t.Errorf("%d batch requests refused, want 1 to 3 (the batches in flight when the first was refused)", got)
		}
		if got := s.Requests().Delete; got < int64(len(ks)) {
			t.Errorf("%d delete requests, want at least one per key", got)
		}
		if got := files(t, s); len(got) != 0 {
			t.Fatalf("%d files left", len(got))
		}
	})
}

// Throttled without end: a deadline ends the delete, and every key is reported failed.
func TestCancellationDuringRetries(t *testing.T) {
	forEach(t, func(t *testing.T, sv server) {
		ft := faulty.New(faulty.Rule{Fault: faulty.Throttle, Match: faulty.Deletes})
		s := open(t, sv.name, ft, opts{batch: 10, attempts: 50})
		ks := keys(12)
		putAll(t, s, ks)
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		start := time.Now()
		res, err := s.Delete(ctx, ks)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Delete under endless throttling = %v, want the deadline", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("Delete took %v after its deadline", d)
		}
		if deleted, gone, failed := tally(t, ks, res); failed != len(ks) {
			t.Fatalf("deleted %d, gone %d, failed %d of %d", deleted, gone, failed, len(ks))
		}
		ft.Disable()
		if got := files(t, s); len(got) != len(ks) {
			t.Fatalf("%d files left, want %d", len(got), len(ks))
		}
	})
}
