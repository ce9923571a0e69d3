package engine

import (
	"bytes"
	"sync"
)

// writtenHashes remembers, for each path this Workspace wrote lately, the
// content it wrote and that content's SHA-256, so that the next Edit of the
// path knows the hash of the content it reads back by comparing the bytes
// (memcmp, tens of GB/s) instead of hashing them again (about 1 GB/s here):
// a file rewritten by the same session, the common case, is hashed once per
// write, not twice. Only equal bytes give a hash, so the hash lock still
// compares against the file's real content; a file someone else changed
// since is hashed as before. The memo holds its own copies.
type writtenHashes struct {
	mu    sync.Mutex
	byRel map[string]*writtenContent
	bytes int // sum of the copies' capacities
}

type writtenContent struct {
	sha     string
	content []byte
}

// A file over writtenMaxFile is not remembered; the copies together stay
// under writtenMaxBytes (the oldest-looking go first: map order).
const (
	writtenMaxFile  = 1 << 20
	writtenMaxBytes = 8 << 20
)

// hashOf returns the hex SHA-256 of b, the content just read from rel, when
// b is the content last written there, and "" when it is not known.
func (m *writtenHashes) hashOf(rel string, b []byte) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e := m.byRel[rel]; e != nil && bytes.Equal(e.content, b) {
		return e.sha
	}
	return ""
}

// keep remembers that content, hashing to sha, was just written to rel.
// The bytes are copied (into the path's previous copy when it has room):
// the caller's content may be anybody's.
func (m *writtenHashes) keep(rel string, content []byte, sha string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.byRel[rel]
	if e != nil {
		delete(m.byRel, rel)
		m.bytes -= cap(e.content)
	}
	if len(content) > writtenMaxFile || sha == "" {
		return
	}
	for k, old := range m.byRel {
		if m.bytes+len(content) <= writtenMaxBytes {
			break
		}
		delete(m.byRel, k)
		m.bytes -= cap(old.content)
	}
	if e == nil {
		e = &writtenContent{}
	}
	if m.byRel == nil {
		m.byRel = map[string]*writtenContent{}
	}
	e.content = append(e.content[:0], content...)
	e.sha = sha
	m.byRel[rel] = e
	m.bytes += cap(e.content)
}
