package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/intentgate/intentgate/agent/provider"
)

// Files of a task directory, named as Roo Code names them.
const (
	historyFile  = "api_conversation_history.json"
	messagesFile = "ui_messages.json"
	metadataFile = "task_metadata.json"
)

// Metadata describes a stored task.
type Metadata struct {
	ID         string     `json:"id"`
	ParentID   string     `json:"parentId,omitempty"`
	Task       string     `json:"task"`
	Mode       string     `json:"mode"`
	Provider   string     `json:"provider"`
	Model      string     `json:"model"`
	Created    time.Time  `json:"created"`
	Updated    time.Time  `json:"updated"`
	State      AgentState `json:"state"`
	Completed  bool       `json:"completed"`
	Mistakes   int        `json:"consecutiveMistakes"`
	TokenUsage TokenUsage `json:"tokenUsage"`
	ToolUsage  ToolUsage  `json:"toolUsage"`
}

// Store keeps tasks under a directory, one subdirectory per task id. Every
// file is replaced atomically (write a temporary file, rename it over), so a
// killed process leaves either the previous or the new version, never a torn
// one. There is no fsync: a kill loses nothing the kernel has; a power cut
// may lose the last step, which a resume repeats.
type Store struct{ Dir string }

var taskIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`) })

// CheckID refuses ids that could name a path outside the store.
func CheckID(id string) error {
	if !taskIDPattern().MatchString(id) || id == "." || id == ".." {
		return fmt.Errorf("task id %q: use letters, digits, '.', '_' and '-' only", id)
	}
	return nil
}

func (s *Store) dir(id string) string { return filepath.Join(s.Dir, id) }

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return writeFile(path, b)
}

// writeFile replaces path with b atomically.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w (the file is damaged; move it aside to start the task afresh)", path, err)
	}
	return nil
}

// SaveMessages, SaveHistory and SaveMetadata replace one file of task id.
func (s *Store) SaveMessages(id string, m []Message) error {
	return writeJSON(filepath.Join(s.dir(id), messagesFile), m)
}

func (s *Store) SaveHistory(id string, h []provider.Message) error {
	return writeJSON(filepath.Join(s.dir(id), historyFile), h)
}

// saveArray replaces file name of task id with a JSON array of items that
// are already encoded.
func (s *Store) saveArray(id, name string, items [][]byte) error {
	n := 2
	for _, it := range items {
		n += len(it) + 2
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ",\n"...)
		}
		b = append(b, it...)
	}
	b = append(b, ']')
	return writeFile(filepath.Join(s.dir(id), name), b)
}

func (s *Store) SaveMetadata(m *Metadata) error {
	return writeJSON(filepath.Join(s.dir(m.ID), metadataFile), m)
}

// Load reads a stored task.
func (s *Store) Load(id string) (*Metadata, []Message, []provider.Message, error) {
	if err := CheckID(id); err != nil {
		return nil, nil, nil, err
	}
	var meta Metadata
	if err := readJSON(filepath.Join(s.dir(id), metadataFile), &meta); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil, nil, fmt.Errorf("no task %q in %s (intentgate tasks list shows the tasks)", id, s.Dir)
		}
		return nil, nil, nil, err
	}
	var msgs []Message
	if err := readJSON(filepath.Join(s.dir(id), messagesFile), &msgs); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, err
	}
	var hist []provider.Message
	if err := readJSON(filepath.Join(s.dir(id), historyFile), &hist); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, err
	}
	meta.State = DetectAgentState(msgs)
	return &meta, msgs, hist, nil
}

// List returns the metadata of every stored task, newest first.
func (s *Store) List() ([]*Metadata, error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []*Metadata
	for _, e := range entries {
		if !e.IsDir() || CheckID(e.Name()) != nil {
			continue
		}
		meta, _, _, err := s.Load(e.Name())
		if err != nil {
			continue
		}
		out = append(out, meta)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.After(out[j].Created) })
	return out, nil
}
