package snap

import (
	"bytes"
	"sync"

	"github.com/intentgate/intentgate/orchestration"
)

// lineCount is len(SplitLines(b)) without splitting.
func lineCount(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	n := bytes.Count(b, []byte{'\n'})
	if b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// FingerprintsFrom returns Fingerprints(SplitLines(after)), taking the
// fingerprints of the lines after shares with before from beforeFPs (the
// fingerprints of before's lines) rather than hashing them again: the
// whole lines of their common beginning and of their common end. Only the
// lines in between are hashed, which for a small edit of a large file is
// a few lines instead of all. beforeFPs that do not have one fingerprint
// per line of before are not used.
func FingerprintsFrom(before []byte, beforeFPs []uint64, after []byte) []uint64 {
	nl := []byte{'\n'}
	// The common beginning, cut back to its last whole line: the lines
	// of after[:pre] are those of before[:pre].
	p := orchestration.CommonPrefixLen(before, after)
	pre := bytes.LastIndexByte(after[:p], '\n') + 1
	k := bytes.Count(after[:pre], nl)
	// The common end, within what follows pre on both sides, cut forward
	// to a line start on both sides: after[q:] and before[bq:] are the
	// same whole lines.
	s := orchestration.CommonSuffixLen(before[pre:], after[pre:])
	q := len(after) - s
	bq := len(before) - s
	if !(q == pre || after[q-1] == '\n') || !(bq == pre || before[bq-1] == '\n') {
		if i := bytes.IndexByte(after[q:], '\n'); i >= 0 {
			q, bq = q+i+1, bq+i+1
		} else {
			q, bq = len(after), len(before)
		}
	}
	m := lineCount(after[q:])
	// Each side's lines are the common beginning's, its middle's and the
	// common end's: counted so, the common end is counted once, not once
	// per side.
	if len(beforeFPs) != k+lineCount(before[pre:bq])+m {
		return Fingerprints(SplitLines(after))
	}
	n := k + lineCount(after[pre:q]) + m
	fps := make([]uint64, n)
	copy(fps, beforeFPs[:k])
	copy(fps[n-m:], beforeFPs[len(beforeFPs)-m:])
	var buf [256]byte
	for i, l := range SplitLines(after[pre:q]) {
		fps[k+i] = lineFP(l, &buf)
	}
	return fps
}

// recentMax and recentBytes bound what a Capture remembers of the contents
// it snapshotted last.
const (
	recentMax   = 64
	recentBytes = 16 << 20
)

// recent remembers the last contents a Capture snapshotted with their
// fingerprints, so that the snapshot of the next version of a file hashes
// only its changed lines (FingerprintsFrom). It is this process's own
// memory, never read from disk.
type recent struct {
	mu    sync.Mutex
	list  []recentSnap // oldest first
	bytes int
}

type recentSnap struct {
	sha     string
	content []byte
	fps     []uint64
}

// fingerprints returns the fingerprints of after, a new version of the
// content hashing to beforeSHA ("" when unknown).
func (r *recent) fingerprints(beforeSHA string, after []byte) []uint64 {
	if beforeSHA != "" {
		r.mu.Lock()
		for i := len(r.list) - 1; i >= 0; i-- {
			if e := r.list[i]; e.sha == beforeSHA {
				r.mu.Unlock()
				return FingerprintsFrom(e.content, e.fps, after)
			}
		}
		r.mu.Unlock()
	}
	return Fingerprints(SplitLines(after))
}

// has reports whether sha is among the contents remembered.
func (r *recent) has(sha string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.list {
		if e.sha == sha {
			return true
		}
	}
	return false
}

// keep remembers content, hashing to sha, with its fingerprints. content
// is kept as it is, not copied: RecordedContent's callers hand over bytes
// nobody changes afterwards (a change's new content).
func (r *recent) keep(sha string, content []byte, fps []uint64) {
	if len(content) > recentBytes/4 {
		return
	}
	e := recentSnap{sha: sha, content: content, fps: fps}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, old := range r.list {
		if old.sha == sha {
			r.list = append(r.list[:i], r.list[i+1:]...)
			r.bytes -= len(old.content)
			break
		}
	}
	r.list = append(r.list, e)
	r.bytes += len(e.content)
	for len(r.list) > recentMax || r.bytes > recentBytes {
		r.bytes -= len(r.list[0].content)
		r.list[0] = recentSnap{}
		r.list = r.list[1:]
	}
}
