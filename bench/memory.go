// Package bench holds the benchmarks of deltavacuum that need generated tables (log replay,
// planner memory on bench/synthetic) and the helpers they share with cmd/dvbench. The
// driver of the whole set is bench/run.sh; docs/benchmarks.md has the results.
package bench

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// HeapSampler records the peak of the Go heap (live and not yet swept objects) and of all the
// memory the runtime has mapped, sampled every millisecond without stopping the world.
type HeapSampler struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	peakHeap uint64
	peakSys  uint64
}

// StartHeapSampler starts sampling.
func StartHeapSampler() *HeapSampler {
	h := &HeapSampler{stop: make(chan struct{})}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/total:bytes"}}
	read := func() {
		metrics.Read(samples)
		h.peakHeap = max(h.peakHeap, samples[0].Value.Uint64())
		h.peakSys = max(h.peakSys, samples[1].Value.Uint64())
	}
	read()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				read()
				return
			case <-tick.C:
				read()
			}
		}
	}()
	return h
}

// Stop stops sampling and returns the peaks: heap objects, and all runtime memory.
func (h *HeapSampler) Stop() (peakHeap, peakRuntime uint64) {
	close(h.stop)
	h.wg.Wait()
	return h.peakHeap, h.peakSys
}

// LiveHeap collects garbage and returns the bytes of live heap objects.
func LiveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
