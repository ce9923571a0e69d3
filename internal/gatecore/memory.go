package gatecore

import (
	"math"
	"os"
	"runtime/debug"
	"sync"
)

// A governed call handles its content several times over (the arguments,
// the file before and after, the ledger line), so a process making calls
// allocates fast while keeping little: with Go's default GC target (100%)
// collection and returning memory to the OS were about a fifth of the CPU
// of a 64 KiB write. A runtime lets the heap grow to 5x what it keeps
// (GOGC=400), under a soft limit, unless the process or its user chose
// otherwise (GOGC, GOMEMLIMIT, or a percentage or limit set before Open).
const (
	gcPercent   = 400
	memoryLimit = 1 << 30
)

var tuneOnce sync.Once

func tuneMemory() {
	tuneOnce.Do(func() {
		if os.Getenv("GOGC") == "" {
			if prev := debug.SetGCPercent(gcPercent); prev != 100 {
				debug.SetGCPercent(prev)
			}
		}
		if os.Getenv("GOMEMLIMIT") == "" && debug.SetMemoryLimit(-1) == math.MaxInt64 {
			debug.SetMemoryLimit(memoryLimit)
		}
	})
}
