package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/intentgate/intentgate/internal/fsx"
)

// Uninstall puts every file back byte for byte: install keeps, beside the
// agent's settings, each file's bytes from before its first change and the
// hash of what it wrote. A file still holding exactly what install wrote is
// restored from there (or removed, if install created it); a file changed
// since falls back to removing intentgate's entries from it, which keeps the
// person's settings but not necessarily their layout, and says so.

// installStateName is the state file, in the agent's configuration
// directory (a protected path: no governed agent may edit it).
const installStateName = "intentgate-install.json"

type installState struct {
	Files map[string]installedFile `json:"files"` // by absolute path
}

type installedFile struct {
	Existed bool   `json:"existed"`
	Before  []byte `json:"before,omitempty"` // the bytes before intentgate's first install
	After   string `json:"after_sha256"`     // hex SHA-256 of what install wrote
}

func hexSHA(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// statePath is where the plan's state lives: beside its first file, which
// is always in the agent's own directory. Cline's plan only creates and
// removes whole scripts of its own, so it keeps none.
func (p *installPlan) statePath(agent string) string {
	if agent == "cline" || len(p.edits) == 0 {
		return ""
	}
	return filepath.Join(filepath.Dir(p.edits[0].path), installStateName)
}

func readInstallState(path string) (*installState, error) {
	st := &installState{Files: map[string]installedFile{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("%s: %v (remove it to uninstall by removing intentgate's entries only)", path, err)
	}
	if st.Files == nil {
		st.Files = map[string]installedFile{}
	}
	return st, nil
}

// noteInstalled records, before install writes, what each changed file held.
func (p *installPlan) noteInstalled(st *installState) {
	for _, e := range p.edits {
		if !e.changed() || !e.keep {
			continue
		}
		prev, ok := st.Files[e.path]
		if ok && prev.After == hexSHA(e.before) && e.exists {
			// Installed before and untouched since: the original stays.
			prev.After = hexSHA(e.after)
			st.Files[e.path] = prev
			continue
		}
		st.Files[e.path] = installedFile{Existed: e.exists, Before: e.before, After: hexSHA(e.after)}
	}
}

// restoreInstalled turns the plan's removals into exact restores where the
// file holds what install wrote. It returns notes for the files it could not
// restore exactly.
func (p *installPlan) restoreInstalled(st *installState) {
	for i := range p.edits {
		e := &p.edits[i]
		f, ok := st.Files[e.path]
		if !ok {
			continue
		}
		if !e.exists || hexSHA(e.before) != f.After {
			if e.exists && e.changed() {
				p.notes = append(p.notes, e.show+" changed after install: intentgate's entries were removed and the rest kept, but its layout may differ from before install")
			}
			continue
		}
		e.keep, e.after = f.Existed, f.Before
		if !f.Existed {
			e.after = nil
		}
	}
}

func writeInstallState(path string, st *installState) error {
	if len(st.Files) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return fsx.WriteFile(path, append(data, '\n'), 0o600)
}
