package picture

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"sort"
	"time"
)

// StoredSnapshot is a Snapshot in a form that outlives its process: an
// external agent's pre-tool hook takes the picture before a command and its
// post-tool hook, another process, compares the workspace with it.
//
// A stored file keeps its stat data and, when the snapshot read it, the
// SHA-256 of its content; the content itself only where the caller chose to
// keep it, since stored snapshots are written to disk for every command.
type StoredSnapshot struct {
	Files  map[string]StoredFile `json:"files"`
	Unseen map[string]string     `json:"unseen,omitempty"`
	// Taken and LedgerAt place the picture in time, when the governed
	// runtime took it: the clock, and the length of the ledger just before
	// the walk. What other sessions recorded after LedgerAt may explain
	// changes the command did not make. Zero when not set.
	Taken    time.Time `json:"taken,omitzero"`
	LedgerAt int64     `json:"ledger_at,omitempty"`
}

// StoredFile is one file of a StoredSnapshot.
type StoredFile struct {
	Size    int64       `json:"s"`
	Mtime   int64       `json:"m"`
	Ctime   int64       `json:"c,omitempty"`
	Mode    fs.FileMode `json:"p"`
	Ino     uint64      `json:"i,omitempty"`
	Link    string      `json:"l,omitempty"`
	SHA256  string      `json:"h,omitempty"` // lowercase hex; "" when the content was not read
	Content []byte      `json:"d,omitempty"`
	Kept    bool        `json:"k,omitempty"` // Content is the file's content
}

// Store returns s in storable form. keep is asked, in path order, for each
// file whose content the snapshot holds, whether to keep that content too.
func (s *Snapshot) Store(keep func(rel string, size int64) bool) *StoredSnapshot {
	st := &StoredSnapshot{Files: make(map[string]StoredFile, len(s.files))}
	rels := make([]string, 0, len(s.files))
	for rel := range s.files {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	for _, rel := range rels {
		e := s.files[rel]
		f := StoredFile{Size: e.size, Mtime: e.mtime, Ctime: e.ctime, Mode: e.mode, Ino: e.ino, Link: e.link}
		if e.kept {
			sum := sha256.Sum256(e.content)
			f.SHA256 = hex.EncodeToString(sum[:])
			if keep != nil && keep(rel, int64(len(e.content))) {
				f.Content, f.Kept = e.content, true
				if f.Content == nil {
					f.Content = []byte{}
				}
			}
		}
		st.Files[rel] = f
	}
	if len(s.unseen) > 0 {
		st.Unseen = make(map[string]string, len(s.unseen))
		for k, v := range s.unseen {
			st.Unseen[k] = v
		}
	}
	return st
}

// Load turns st back into a Snapshot of the workspace at root, for Diff.
// Files stored without content diff as changes whose old content is unknown.
func (st *StoredSnapshot) Load(root string) *Snapshot {
	s := &Snapshot{root: root, files: make(map[string]*entry, len(st.Files)), unseen: map[string]string{}}
	for rel, f := range st.Files {
		e := &entry{size: f.Size, mtime: f.Mtime, ctime: f.Ctime, mode: f.Mode, ino: f.Ino, link: f.Link}
		if f.Kept {
			e.content, e.kept = f.Content, true
			if e.content == nil {
				e.content = []byte{}
			}
		}
		s.files[rel] = e
	}
	for k, v := range st.Unseen {
		s.unseen[k] = v
	}
	return s
}
