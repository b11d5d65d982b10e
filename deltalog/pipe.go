package deltalog

import (
	"context"
	"errors"
	"sync/atomic"
)

// pipeBatch is the number of values a producer hands over at a time: large enough that the
// hand-over costs nothing beside the rows, small enough that the values held between the two
// goroutines (at most pipeDepth+2 batches) weigh a few hundred kilobytes.
const (
	pipeBatch = 1024
	pipeDepth = 2
)

// errPipeStopped is what emit returns to the producer once the caller's fn has failed.
var errPipeStopped = errors.New("deltalog: the reader of the actions stopped")

// errPipeExited is what pipe returns when produce neither returned nor panicked
// (runtime.Goexit): the values after it are missing, so the read cannot count as whole.
var errPipeExited = errors.New("deltalog: the reader of the actions exited before its end")

// pipe runs produce on a goroutine of its own and calls fn, on the caller's goroutine, with
// every value produce emits, in the order emitted. Snapshot.FilesWith reads a checkpoint so:
// decoding its rows (decompressing, levels, strings) overlaps, on another core, with what the
// caller does with the files.
//
// What the caller sees is what calling fn from produce directly would give: fn is called for
// every value emitted before produce failed, then produce's error is returned; once fn fails,
// produce is stopped (its emit returns errPipeStopped, and its ctx is canceled, for a produce
// that reads on without emitting), no further value reaches fn, and fn's error is returned
// (whatever produce did meanwhile, which calling it directly would not have reached). pipe
// returns only once produce has returned, so that nothing reads a checkpoint after its
// caller closed it. A panic in produce is raised again on the caller's goroutine
// (parquet-go's own panics are errors already: parquetguard.Protect), so that it ends, or is
// recovered by, what it would have without the pipe; a panic in fn stops produce and waits
// for it before it goes on.
func pipe[T any](ctx context.Context, produce func(ctx context.Context, emit func(T) error) error, fn func(T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []T, pipeDepth)
	stop := make(chan struct{})
	var stopped atomic.Bool
	halt := func() {
		stopped.Store(true)
		cancel()
		close(stop)
	}
	produced := make(chan pipeEnd, 1)
	go func() {
		batch := make([]T, 0, pipeBatch)
		send := func() error {
			select {
			case batches <- batch:
				batch = make([]T, 0, pipeBatch)
				return nil
			case <-stop:
				return errPipeStopped
			}
		}
		end := pipeEnd{err: errPipeExited}
		defer func() {
			if p := recover(); p != nil {
				end = pipeEnd{panicked: true, panic: p}
			}
			// The values before a failure (or a panic) reach fn too (an empty batch costs fn
			// nothing). After a stop, send returns at once, and fn's error is the one returned.
			_ = send()
			close(batches)
			produced <- end
		}()
		end.err = produce(ctx, func(v T) error {
			if stopped.Load() {
				return errPipeStopped
			}
			batch = append(batch, v)
			if len(batch) < pipeBatch {
				return nil
			}
			return send()
		})
	}()
	var fnErr error
	ended := false
	defer func() {
		if !ended {
			// fn panicked: produce is stopped and waited for before the panic goes on, so
			// that nothing reads the checkpoint behind it and no goroutine is left blocked.
			if fnErr == nil {
				halt()
			}
			<-produced
		}
	}()
read:
	for batch := range batches {
		for _, v := range batch {
			if fnErr = fn(v); fnErr != nil {
				halt()
				break read
			}
		}
	}
	end := <-produced
	ended = true
	if fnErr != nil {
		return fnErr
	}
	if end.panicked {
		panic(end.panic) // on the caller's goroutine, as it would without the pipe
	}
	return end.err
}

// pipeEnd is how produce ended: its error, or the value it panicked with.
type pipeEnd struct {
	err      error
	panicked bool
	panic    any
}
