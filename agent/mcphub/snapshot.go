package mcphub

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
)

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// maxSnapshot bounds the files looked at before a call; a bigger file's
// change is still recorded, without its old content.
const maxSnapshot = 8 << 20

// snapshot is the content of the files a mutating MCP call names, before
// the call, so that what it changed can be recorded in the ledger. The
// server is another process: a file it changes without naming it in its
// arguments is not seen here.
type snapshot struct {
	files []snapFile
}

type snapFile struct {
	rel     string
	before  []byte
	existed bool
	unknown bool
}

func takeSnapshot(ws *engine.Workspace, base string, args json.RawMessage) (*snapshot, error) {
	if ws == nil {
		return nil, errNoWorkspace
	}
	found, err := hooks.PathArgs(args)
	if err != nil {
		return nil, err
	}
	rels, err := hooks.CanonicalPathArgs(ws, base, found)
	if err != nil {
		return nil, err
	}
	s := &snapshot{}
	seen := map[string]bool{}
	for _, rel := range rels {
		if rel == "." || seen[rel] {
			continue
		}
		seen[rel] = true
		f := snapFile{rel: rel}
		if fi, err := ws.Stat(rel); err == nil {
			if fi.IsDir() {
				continue
			}
			f.existed = true
			if fi.Size() > maxSnapshot {
				f.unknown = true
			} else if b, err := ws.ReadFile(rel); err == nil {
				f.before = b
			} else {
				f.unknown = true
			}
		}
		s.files = append(s.files, f)
	}
	return s, nil
}

func (s *snapshot) changes(ws *engine.Workspace) []engine.FileChange {
	var out []engine.FileChange
	for _, f := range s.files {
		ch := engine.FileChange{Path: f.rel, Before: f.before, Existed: f.existed, BeforeUnknown: f.unknown}
		fi, err := ws.Stat(f.rel)
		switch {
		case err != nil:
			if !f.existed {
				continue
			}
			ch.Deleted = true
		case fi.IsDir():
			continue
		default:
			after, err := ws.ReadFile(f.rel)
			if err != nil {
				continue
			}
			if f.existed && !f.unknown && bytes.Equal(after, f.before) {
				continue
			}
			ch.After = after
		}
		out = append(out, ch)
	}
	return out
}
