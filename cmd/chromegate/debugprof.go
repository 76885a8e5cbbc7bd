package main

import (
	"runtime"
	"time"
)

// Sampling of the contention profiles the debug endpoint serves
// (/debug/pprof/block and /debug/pprof/mutex): the load suite reads them
// to tell a call waiting on one of our locks from one waiting on the
// browser. One blocking event per 100 µs blocked and one mutex contention
// in 5 are recorded, which costs nothing measurable on a server that waits
// on a browser.
const (
	blockProfileRate     = int(100 * time.Microsecond)
	mutexProfileFraction = 5
)

// contentionProfiles turns on the block and mutex profiles; only a server
// with a debug endpoint records them.
func contentionProfiles() {
	runtime.SetBlockProfileRate(blockProfileRate)
	runtime.SetMutexProfileFraction(mutexProfileFraction)
}
