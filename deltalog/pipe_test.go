package deltalog

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/deltavacuum/deltavacuum/storage/mem"
)

// TestPipe: the producer's goroutine changes nothing a caller sees. Every action reaches
// fn in the order produced, those before a producer's failure too; fn's failure stops the
// producer and is what is returned; pipe returns only after the producer has.
func TestPipe(t *testing.T) {
	failDecode := errors.New("row 7 is corrupt")
	failFn := errors.New("fn refused")
	for _, tc := range []struct {
		name      string
		n         int   // actions decoded
		decodeErr error // returned by decode after its n actions
		fnFailsAt int   // index of the action fn refuses, -1 for none
		wantSeen  int
		wantErr   error
	}{
		{"none", 0, nil, -1, 0, nil},
		{"fewer than a batch", 3, nil, -1, 3, nil},
		{"exactly a batch", pipeBatch, nil, -1, pipeBatch, nil},
		{"many batches and a part", 5*pipeBatch + 17, nil, -1, 5*pipeBatch + 17, nil},
		{"decode fails inside a batch", 2*pipeBatch + 7, failDecode, -1, 2*pipeBatch + 7, failDecode},
		{"decode fails on a batch's end", 3 * pipeBatch, failDecode, -1, 3 * pipeBatch, failDecode},
		{"decode fails first", 0, failDecode, -1, 0, failDecode},
		{"fn fails on the first", 10 * pipeBatch, nil, 0, 1, failFn},
		{"fn fails in a later batch", 10 * pipeBatch, nil, 3*pipeBatch + 5, 3*pipeBatch + 6, failFn},
		{"fn fails on the last", 2*pipeBatch + 1, nil, 2 * pipeBatch, 2*pipeBatch + 1, failFn},
		{"fn fails, then decode would", 4 * pipeBatch, failDecode, pipeBatch, pipeBatch + 1, failFn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decodeReturned := false
			stoppedAt := -1
			decode := func(_ context.Context, emit func(*Action) error) error {
				defer func() { decodeReturned = true }()
				for i := range tc.n {
					if err := emit(&Action{Add: &Add{Path: fmt.Sprint(i)}}); err != nil {
						if !errors.Is(err, errPipeStopped) {
							t.Errorf("emit: %v", err)
						}
						stoppedAt = i
						return err
					}
				}
				return tc.decodeErr
			}
			seen := 0
			err := pipe(context.Background(), decode, func(a *Action) error {
				if a.Add.Path != fmt.Sprint(seen) {
					t.Fatalf("action %d is %q: out of order", seen, a.Add.Path)
				}
				seen++
				if seen-1 == tc.fnFailsAt {
					return failFn
				}
				return nil
			})
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if seen != tc.wantSeen {
				t.Errorf("fn saw %d actions, want %d", seen, tc.wantSeen)
			}
			if !decodeReturned {
				t.Error("pipe returned before produce did")
			}
			if tc.fnFailsAt >= 0 && tc.fnFailsAt+1 < tc.n-(pipeDepth+2)*pipeBatch && stoppedAt < 0 {
				// With batches still to come when fn failed, decode must have been stopped,
				// not left to decode the rest.
				t.Errorf("decode was not stopped after fn failed")
			}
		})
	}
}

// TestFilesWithPipedCheckpoint: the checkpoint's rows, decoded and filtered on pipe's
// goroutine, reach fn as they would without it: each file once, a newer commit's action
// winning over the checkpoint's row; and fn's failure in the middle of the checkpoint stops
// the read there and is returned.
func TestFilesWithPipedCheckpoint(t *testing.T) {
	if WriteCheckpointForTest == nil {
		t.Skip("no checkpoint writer in this test binary")
	}
	ctx := context.Background()
	st := mem.New("mem://b/t")
	const n = 3*pipeBatch + 100 // the checkpoint's adds span several batches
	first := []any{protocolOf(1, 2), metadataWith(map[string]string{})}
	for i := range n {
		first = append(first, addOf(fmt.Sprintf("f%d", i)))
	}
	commitAt(t, st, 0, first...)
	commitAt(t, st, 1, addOf("b"))
	commitAt(t, st, 2, removeOf("f0"))
	at2, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	writeCheckpointOf(t, st, at2)
	commitAt(t, st, 3, removeOf("f100"), removeOf(fmt.Sprintf("f%d", n-1)), addOf("g"))
	snap, err := Load(ctx, st)
	if err != nil || snap.Segment.CheckpointVersion != 2 {
		t.Fatalf("Load: checkpoint %d, %v", snap.Segment.CheckpointVersion, err)
	}
	got := map[string]File{}
	calls := 0
	err = snap.FilesWith(ctx, st, FilesOptions{}, func(f File) error {
		calls++
		if _, twice := got[f.Key]; twice {
			t.Errorf("%s reached fn twice", f.Key)
		}
		got[f.Key] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// n adds, b and g; f0, f100 and the last f removed.
	if want := n + 2; calls != want || len(got) != want {
		t.Errorf("fn called %d times for %d keys, want %d", calls, len(got), want)
	}
	for key, want := range map[string]struct {
		removed, fromCheckpoint bool
		version                 int64
	}{
		"f0":                    {true, true, 2},
		"f100":                  {true, false, 3},
		fmt.Sprintf("f%d", n-1): {true, false, 3},
		"f1":                    {false, true, 2},
		fmt.Sprintf("f%d", n-2): {false, true, 2},
		"b":                     {false, true, 2},
		"g":                     {false, false, 3},
	} {
		f, ok := got[key]
		if !ok || f.Removed != want.removed || f.FromCheckpoint != want.fromCheckpoint || f.Version != want.version {
			t.Errorf("%s: %+v (there: %v), want removed %v, from the checkpoint %v, version %d", key, f, ok, want.removed, want.fromCheckpoint, want.version)
		}
	}

	stop := errors.New("enough")
	calls = 0
	err = snap.FilesWith(ctx, st, FilesOptions{}, func(File) error {
		calls++
		if calls == 2*pipeBatch {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || calls != 2*pipeBatch {
		t.Errorf("fn failing on call %d: %v after %d calls", 2*pipeBatch, err, calls)
	}
}

// TestPipePanicsOnTheCallersGoroutine: a panic in produce is raised again where pipe was
// called, after fn had every value emitted before it, so that what would have recovered it
// without the pipe (an HTTP server's handler, say) still does.
func TestPipePanicsOnTheCallersGoroutine(t *testing.T) {
	seen := 0
	defer func() {
		p := recover()
		if p != "a bug in a decoder" {
			t.Errorf("recovered %v, want the producer's panic", p)
		}
		if seen != pipeBatch+3 {
			t.Errorf("fn saw %d values before the panic, want %d", seen, pipeBatch+3)
		}
	}()
	_ = pipe(context.Background(), func(_ context.Context, emit func(int) error) error {
		for i := range pipeBatch + 3 {
			if err := emit(i); err != nil {
				return err
			}
		}
		panic("a bug in a decoder")
	}, func(int) error { seen++; return nil })
	t.Error("pipe returned after its producer panicked")
}

// TestPipeWaitsForTheProducerWhenFnPanics: fn's panic goes on from pipe only once produce
// was stopped and has returned: no goroutine is left blocked, or reading a checkpoint its
// caller closes while the panic unwinds.
func TestPipeWaitsForTheProducerWhenFnPanics(t *testing.T) {
	produceReturned := false
	defer func() {
		if p := recover(); p != "a bug in fn" {
			t.Errorf("recovered %v, want fn's panic", p)
		}
		if !produceReturned {
			t.Error("fn's panic left pipe before produce returned")
		}
	}()
	seen := 0
	_ = pipe(context.Background(), func(_ context.Context, emit func(int) error) error {
		defer func() { produceReturned = true }()
		for i := range 20 * pipeBatch {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	}, func(int) error {
		if seen++; seen == pipeBatch+1 {
			panic("a bug in fn")
		}
		return nil
	})
	t.Error("pipe returned after fn panicked")
}

// TestPipeFnErrorWinsOverALaterPanic: once fn has failed, what produce did after (here, a
// panic further on, which calling it directly would never have reached) is not what the
// caller sees: fn's error is.
func TestPipeFnErrorWinsOverALaterPanic(t *testing.T) {
	refused := errors.New("fn refused")
	err := pipe(context.Background(), func(_ context.Context, emit func(int) error) error {
		for i := range 3 * pipeBatch {
			_ = emit(i) // a producer that goes on whatever emit says
		}
		panic("a bug on row 3072")
	}, func(v int) error {
		if v == 10 {
			return refused
		}
		return nil
	})
	if !errors.Is(err, refused) {
		t.Errorf("err = %v, want fn's", err)
	}
}

// TestPipeStopsAProducerThatEmitsLittle: a producer that reads many rows for each it emits
// (a checkpoint most of whose rows a newer commit settled) is stopped through its ctx once fn
// fails, not left to read to its end.
func TestPipeStopsAProducerThatEmitsLittle(t *testing.T) {
	const rows = 50_000_000
	refused := errors.New("fn refused")
	read := 0
	var produceErr error
	err := pipe(context.Background(), func(ctx context.Context, emit func(int) error) error {
		for read = 0; read < rows; read++ {
			if err := ctx.Err(); err != nil {
				produceErr = err
				return err
			}
			if read < pipeBatch { // a first batch, then rows that emit nothing
				if err := emit(read); err != nil {
					produceErr = err
					return err
				}
			}
		}
		return nil
	}, func(int) error { return refused })
	if !errors.Is(err, refused) {
		t.Errorf("err = %v, want fn's", err)
	}
	if produceErr == nil || read == rows {
		t.Errorf("produce read %d of %d rows and ended with %v: it was not stopped", read, rows, produceErr)
	}
}

// TestPipeProducerThatExits: a produce that neither returns nor panics (runtime.Goexit) does
// not pass for a whole read.
func TestPipeProducerThatExits(t *testing.T) {
	seen := 0
	err := pipe(context.Background(), func(_ context.Context, emit func(int) error) error {
		for i := range 3 {
			_ = emit(i)
		}
		runtime.Goexit()
		return nil
	}, func(int) error { seen++; return nil })
	if !errors.Is(err, errPipeExited) || seen != 3 {
		t.Errorf("err = %v after %d values, want errPipeExited after 3", err, seen)
	}
}

// TestFilesWithBadPathNamesTheCheckpoint: a path in a checkpoint that cannot be read as a key
// is refused with the name of the checkpoint file it was read from (the row is turned into
// keys on the caller's side of the pipe, away from the file's reader).
func TestFilesWithBadPathNamesTheCheckpoint(t *testing.T) {
	if WriteCheckpointForTest == nil {
		t.Skip("no checkpoint writer in this test binary")
	}
	ctx := context.Background()
	st := mem.New("mem://b/t")
	commitAt(t, st, 0, protocolOf(1, 2), metadataWith(map[string]string{}), addOf("ok.parquet"))
	commitAt(t, st, 1, addOf("also-ok.parquet"))
	snap, err := Load(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	p, m := snap.Protocol, snap.Metadata
	acts := []*Action{{Protocol: &p}, {Metadata: &m},
		{Add: &Add{Path: "ok.parquet", Size: 1, PartitionValues: map[string]string{}}},
		{Add: &Add{Path: "bad%zz.parquet", Size: 1, PartitionValues: map[string]string{}}}}
	st.PutAt(LogDir+"00000000000000000001.checkpoint.parquet", pqWrite(t, pqSeq(acts)), time.Now())
	snap, err = Load(ctx, st)
	if err != nil || snap.Segment.CheckpointVersion != 1 {
		t.Fatalf("Load: %v", err)
	}
	err = snap.FilesWith(ctx, st, FilesOptions{}, func(File) error { return nil })
	if !errors.Is(err, ErrBadPath) || !strings.Contains(err.Error(), "reading _delta_log/00000000000000000001.checkpoint.parquet of mem://b/t") {
		t.Errorf("err = %v; want ErrBadPath naming the checkpoint file", err)
	}
}
