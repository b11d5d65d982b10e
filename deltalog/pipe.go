package deltalog

import (
	"errors"
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

// pipe runs produce on a goroutine of its own and calls fn, on the caller's goroutine, with
// every value produce emits, in the order emitted. Snapshot.FilesWith reads a checkpoint so:
// decoding its rows (decompressing, levels, strings) overlaps, on another core, with what the
// caller does with the files.
//
// What the caller sees is what calling fn from produce directly would give: fn is called for
// every value emitted before produce failed, then produce's error is returned; once fn fails,
// produce is stopped (its emit returns errPipeStopped), no further value reaches fn, and fn's
// error is returned. pipe returns only once produce has returned, so that nothing reads a
// checkpoint after its caller closed it. A panic in produce is not recovered: produce must
// not panic (parquet-go's panics are turned into errors by parquetguard.Protect).
func pipe[T any](produce func(emit func(T) error) error, fn func(T) error) error {
	batches := make(chan []T, pipeDepth)
	stop := make(chan struct{})
	produced := make(chan error, 1)
	go func() {
		defer close(batches)
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
		err := produce(func(v T) error {
			batch = append(batch, v)
			if len(batch) < pipeBatch {
				return nil
			}
			return send()
		})
		if len(batch) > 0 {
			// The values before a failure reach fn too. After a stop, send returns at once,
			// and fn's error is the one returned.
			_ = send()
		}
		produced <- err
	}()
	var fnErr error
read:
	for batch := range batches {
		for _, v := range batch {
			if fnErr = fn(v); fnErr != nil {
				close(stop) // produce's next send returns errPipeStopped
				break read
			}
		}
	}
	err := <-produced
	if fnErr != nil {
		return fnErr
	}
	return err
}
