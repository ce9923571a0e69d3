package orchestration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/intentgate/intentgate/internal/fsx"
)

// Session is the state of one agent session. It lives on disk because an
// external agent runs a fresh hook process for every event.
type Session struct {
	ID     string `json:"id"`
	Intent string `json:"intent,omitempty"`
	Mode   string `json:"mode,omitempty"`
	// Reads maps a canonical workspace-relative path to the lowercase hex
	// SHA-256 of the bytes this session last read or wrote there.
	Reads map[string]string `json:"reads,omitempty"`
	// Snapshots holds workspace snapshots taken before a command ran, keyed
	// by call id, until the command's post event consumes them.
	Snapshots map[string]json.RawMessage `json:"snapshots,omitempty"`
	// Todos is the session's todo list as JSON, a list of Todo; read and
	// write it with TodoList and SetTodoList.
	Todos   json.RawMessage `json:"todos,omitempty"`
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`

	// Question is the follow-up question the session asked and is waiting
	// on, for the front door to put to a person.
	Question *Question `json:"question,omitempty"`
	// Completion is the result the session presented as finished.
	Completion *Completion `json:"completion,omitempty"`
	// Tasks are the subtasks the session delegated with new_task, oldest
	// first, for the front door to start.
	Tasks []Task `json:"tasks,omitempty"`
	// Usage counts, per tool, the calls the session made and how many of
	// them failed (denied, or the tool itself failed).
	Usage map[string]ToolUsage `json:"usage,omitempty"`
	// Refused, when set, says why the session may make no further call: a
	// state it depended on (a pending picture of the workspace) was
	// removed or altered outside intentgate. Load reports it as
	// ErrSessionRefused; a person clears it by removing the session file.
	Refused string `json:"refused,omitempty"`
}

// BatchEvery is how long a process that serves calls may hold back what it
// derives from them (session read hashes and counters, intent_map.md)
// before writing it: what a call derives is written once per batch, not
// once per call. See SessionStore.Batch.
const BatchEvery = 200 * time.Millisecond

// ErrSessionRefused is the error Load and Update return for a session whose
// state was tampered with: its file altered outside intentgate (the MAC does
// not match) or a state it depended on gone.
var ErrSessionRefused = errors.New("session refused")

// The keys under which the session tools (switch_mode, update_todo_list,
// ask_followup_question, attempt_completion, new_task) put what they decided
// in engine.Result.Data, as values of the types below; the mode policy
// records them in the session, and front doors show them.
const (
	EffectMode       = "mode"       // string: the mode slug switched to
	EffectTodos      = "todos"      // []Todo
	EffectQuestion   = "question"   // Question
	EffectCompletion = "completion" // Completion
	EffectTask       = "task"       // Task
)

// Todo is one item of a session's todo list. Status is pending, in_progress
// or completed, as in Roo Code.
type Todo struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status"`
}

// The statuses of a Todo.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
)

// Suggestion is a suggested answer to a follow-up question, optionally
// switching the session to a mode when chosen.
type Suggestion struct {
	Text string `json:"text"`
	Mode string `json:"mode,omitempty"`
}

// Question is a follow-up question waiting for an answer.
type Question struct {
	CallID      string       `json:"call_id,omitempty"`
	Text        string       `json:"text"`
	Suggestions []Suggestion `json:"suggestions,omitempty"`
	// Asked is set when the session records the question.
	Asked time.Time `json:"asked,omitzero"`
}

// Completion is a result a session presented as the end of its task.
type Completion struct {
	CallID  string `json:"call_id,omitempty"`
	Result  string `json:"result"`
	Command string `json:"command,omitempty"`
	// At is set when the session records the completion.
	At time.Time `json:"at,omitzero"`
}

// Task is a subtask delegated with new_task.
type Task struct {
	ID      string `json:"id"`
	Mode    string `json:"mode"`
	Message string `json:"message"`
	Todos   []Todo `json:"todos,omitempty"`
	// Created is set when the session records the task.
	Created time.Time `json:"created,omitzero"`
}

// ToolUsage counts one tool's calls in a session.
type ToolUsage struct {
	Attempts int `json:"attempts"`
	Failures int `json:"failures"`
}

// TodoList decodes the session's todo list. A session without one has an
// empty list.
func (s *Session) TodoList() ([]Todo, error) {
	if len(s.Todos) == 0 || string(s.Todos) == "null" {
		return nil, nil
	}
	var todos []Todo
	if err := json.Unmarshal(s.Todos, &todos); err != nil {
		return nil, fmt.Errorf("session %q: todo list: %w", s.ID, err)
	}
	return todos, nil
}

// SetTodoList replaces the session's todo list.
func (s *Session) SetTodoList(todos []Todo) error {
	if len(todos) == 0 {
		s.Todos = nil
		return nil
	}
	b, err := json.Marshal(todos)
	if err != nil {
		return err
	}
	s.Todos = b
	return nil
}

// CountUse records one call of tool, failed or not.
func (s *Session) CountUse(tool string, failed bool) {
	if s.Usage == nil {
		s.Usage = make(map[string]ToolUsage)
	}
	u := s.Usage[tool]
	u.Attempts++
	if failed {
		u.Failures++
	}
	s.Usage[tool] = u
}

// SessionStore keeps sessions as one JSON file each in a directory. Each
// file ends with a line holding the HMAC of the rest under the workspace key
// (orchestration.WorkspaceKey, kept outside the workspace), so that a file a
// command or another session rewrote is refused rather than believed.
type SessionStore struct {
	dir string

	// seen keeps, per session id, the bytes of the file this store last
	// read or wrote and the session they hold: while the file still holds
	// those bytes, a load copies the session instead of checking the MAC
	// and decoding the JSON again (a governed write loads its session at
	// the start of the call and again under the lock at its end).
	mu   sync.Mutex
	seen map[string]sessionSeen
	// files keeps, per session id, the file's bytes while a stat proves
	// them current (fsx.File), so that the loads of a call cost a stat
	// each, and a read only after the file changed.
	files map[string]*fsx.File

	// Batching of derived updates (Batch): bmu is held while a session
	// with pending changes is read or written, so that no load sees the
	// file without the changes this process has not written yet.
	bmu     sync.Mutex
	every   time.Duration
	pending map[string]*sessionPending
	timer   *time.Timer
	closed  bool
}

// sessionPending is what UpdateDerived has not written yet of one session:
// the changes, to replay on the file as it is when they are written, and the
// session they give on the file as it was last read (raw; exists false when
// there was none).
type sessionPending struct {
	fns    []func(*Session) error
	raw    []byte
	exists bool
	sess   *Session
}

type sessionSeen struct {
	raw  []byte
	sess *Session
}

// sessionsSeenMax bounds the sessions a store remembers (a daemon serves
// many): past it, it starts over.
const sessionsSeenMax = 256

// remember keeps sess as what raw, the file of session id, holds.
func (s *SessionStore) remember(id string, raw []byte, sess *Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen == nil || len(s.seen) >= sessionsSeenMax {
		s.seen = map[string]sessionSeen{}
	}
	s.seen[id] = sessionSeen{raw: raw, sess: sess.clone()}
}

// recall returns a copy of the session the file of id holds when raw are
// the bytes this store last saw there; with shared, the store's own copy,
// which is never changed.
func (s *SessionStore) recall(id string, raw []byte, shared bool) *Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.seen[id]; ok && bytes.Equal(e.raw, raw) {
		if shared {
			return e.sess
		}
		return e.sess.clone()
	}
	return nil
}

// clone copies the session deeply enough that changing the copy (what an
// update's fn and the session tools do: set fields, assign into the maps,
// append tasks) leaves the original as it was.
func (sess *Session) clone() *Session {
	c := *sess
	c.Reads = maps.Clone(sess.Reads)
	c.Snapshots = maps.Clone(sess.Snapshots)
	c.Usage = maps.Clone(sess.Usage)
	c.Todos = bytes.Clone(sess.Todos)
	c.Tasks = slices.Clone(sess.Tasks)
	if sess.Question != nil {
		q := *sess.Question
		q.Suggestions = slices.Clone(q.Suggestions)
		c.Question = &q
	}
	if sess.Completion != nil {
		cp := *sess.Completion
		c.Completion = &cp
	}
	return sessionsInit(&c)
}

const sessionMACPrefix = "hmac-sha256:"

// sessionsMAC authenticates a session file's JSON for the file it is in.
func (s *SessionStore) mac(name string, body []byte) (string, error) {
	key, err := cachedWorkspaceKey(filepath.Dir(filepath.Dir(s.dir)))
	if err != nil {
		return "", fmt.Errorf("session state cannot be authenticated: %w", err)
	}
	return MAC(key, []byte("session"), []byte(name), body), nil
}

// OpenSessions returns the store for dir (usually .orchestration/sessions).
// The directory is created on the first update.
func OpenSessions(dir string) *SessionStore {
	return &SessionStore{dir: dir}
}

// sessionsBase derives a file name from a session id. Ids come from agents
// and are untrusted, so the name is a sanitized readable prefix plus a hash
// of the whole id: nothing in an id can name another directory, a device or
// a hidden file, and ids differing only in case or in stripped characters
// still get distinct files.
func sessionsBase(id string) string {
	const maxPrefix = 40
	var b strings.Builder
	for i := 0; i < len(id) && b.Len() < maxPrefix; i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	return b.String() + "-" + hex.EncodeToString(sum[:16])
}

func sessionsCheckID(id string) error {
	switch {
	case id == "":
		return errors.New("empty session id")
	case !utf8.ValidString(id):
		// JSON would replace the invalid bytes, and the stored id would no
		// longer match the one asked for.
		return fmt.Errorf("session id %q is not valid UTF-8", id)
	}
	return nil
}

func (s *SessionStore) path(id string) string {
	return filepath.Join(s.dir, sessionsBase(id)+".json")
}

// Load returns the session with the given id, or a fresh empty session if
// none has been stored. A session file that cannot be decoded is an error,
// never a silent reset: it holds the hashes that guard against stale writes.
func (s *SessionStore) Load(id string) (*Session, error) {
	if err := sessionsCheckID(id); err != nil {
		return nil, err
	}
	sess, err := s.load(id)
	if err != nil {
		return nil, err
	}
	return sess, s.checkRefused(sess)
}

// Refuse marks the session so that every later Load fails with
// ErrSessionRefused and why.
func (s *SessionStore) Refuse(id, why string) error {
	_, err := s.update(id, func(sess *Session) error {
		if sess.Refused == "" {
			sess.Refused = why
		}
		return nil
	}, true, fsx.Settled)
	return err
}

func (s *SessionStore) load(id string) (*Session, error) {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	sess, _, _, err := s.loadPending(id, false)
	return sess, err
}

// LoadShared is Load returning the store's own copy of the session, which
// the caller must never change (nor anything it points to): a governed call
// reads its session several times and changes it only through an update, so
// a copy per load would be work for nothing. The copy stays as it is; a
// later change of the session makes a new one.
func (s *SessionStore) LoadShared(id string) (*Session, error) {
	if err := sessionsCheckID(id); err != nil {
		return nil, err
	}
	s.bmu.Lock()
	sess, _, _, err := s.loadPending(id, true)
	s.bmu.Unlock()
	if err != nil {
		return nil, err
	}
	return sess, s.checkRefused(sess)
}

// loadPending is the session as this process has it: the file's, with the
// changes not written yet replayed on it (the caller holds bmu). It also
// returns the file's bytes and whether it exists. With shared, the session
// may be the store's own copy (see LoadShared); else it is the caller's.
func (s *SessionStore) loadPending(id string, shared bool) (*Session, []byte, bool, error) {
	data, exists, err := s.readFile(id)
	if err != nil {
		return nil, nil, false, err
	}
	p := s.pending[id]
	if p != nil && p.exists == exists && bytes.Equal(p.raw, data) {
		// The file is as the pending changes were last applied to.
		if shared {
			return p.sess, data, exists, nil
		}
		return p.sess.clone(), data, exists, nil
	}
	sess, err := s.decodeFile(id, data, exists, shared && p == nil)
	if err != nil {
		return nil, nil, false, err
	}
	if p == nil {
		return sess, data, exists, nil
	}
	// Another process wrote the session since: the changes go on top of
	// what it wrote, as they will when they are written.
	for _, fn := range p.fns {
		fn(sess)
	}
	if shared {
		p.raw, p.exists, p.sess = data, exists, sess
		return sess, data, exists, nil
	}
	p.raw, p.exists, p.sess = data, exists, sess.clone()
	return sess, data, exists, nil
}

// fileOf returns the kept file of session id.
func (s *SessionStore) fileOf(id string) *fsx.File {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[id]; ok {
		return f
	}
	if s.files == nil || len(s.files) >= sessionsSeenMax {
		s.files = map[string]*fsx.File{}
	}
	f := fsx.NewFile(s.path(id), 0)
	s.files[id] = f
	return f
}

// readFile returns the bytes of the file of session id (shared: never
// change them) and whether it exists. A FIFO or anything else that is not
// a regular file there is an error, never a wait.
func (s *SessionStore) readFile(id string) ([]byte, bool, error) {
	data, _, err := s.fileOf(id).Read()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("load session: %w", err)
	}
	return data, true, nil
}

// loadDisk is the session as its file holds it, or a fresh one.
func (s *SessionStore) loadDisk(id string) (*Session, error) {
	data, exists, err := s.readFile(id)
	if err != nil {
		return nil, err
	}
	return s.decodeFile(id, data, exists, false)
}

// decodeFile is the session data holds; with shared, it may be the store's
// own copy, which the caller must not change.
func (s *SessionStore) decodeFile(id string, data []byte, exists, shared bool) (*Session, error) {
	if !exists {
		return sessionsInit(&Session{ID: id}), nil
	}
	p := s.path(id)
	if sess := s.recall(id, data, shared); sess != nil {
		return sess, nil
	}
	body, err := s.authentic(p, data)
	if err != nil {
		return nil, err
	}
	sess, err := sessionsDecode(p, body)
	if err != nil {
		return nil, err
	}
	if sess.ID != id {
		return nil, fmt.Errorf("session file %s holds session %q, not %q", p, sess.ID, id)
	}
	s.remember(id, data, sess)
	return sess, nil
}

// authentic checks the MAC line of the session file p and returns the JSON.
func (s *SessionStore) authentic(p string, data []byte) ([]byte, error) {
	body, tail, ok := bytes.Cut(data, []byte("\n"+sessionMACPrefix))
	if ok {
		body = data[:len(body)+1]
	}
	want, err := s.mac(filepath.Base(p), body)
	if err != nil {
		return nil, err
	}
	if !ok || !MACEqual(string(bytes.TrimSpace(tail)), want) {
		return nil, fmt.Errorf("%w: the session file %s was changed outside intentgate (its MAC does not match); remove it to start the session over, with no intent selected and no file read", ErrSessionRefused, p)
	}
	return body, nil
}

// Load refuses a session marked Refused; Update and LoadAny do not, so that
// a person can look at it.
func (s *SessionStore) checkRefused(sess *Session) error {
	if sess.Refused != "" {
		return fmt.Errorf("%w: %s; remove the session file %s to start the session over", ErrSessionRefused, sess.Refused, s.path(sess.ID))
	}
	return nil
}

func sessionsDecode(path string, data []byte) (*Session, error) {
	var sess Session
	if err := json.Unmarshal(data, &sess); err != nil {
		return nil, fmt.Errorf("session file %s is corrupt: %w", path, err)
	}
	if sess.ID == "" {
		return nil, fmt.Errorf("session file %s is corrupt: no session id", path)
	}
	return sessionsInit(&sess), nil
}

// sessionsInit makes the maps non-nil so callers can assign into them.
func sessionsInit(sess *Session) *Session {
	if sess.Reads == nil {
		sess.Reads = make(map[string]string)
	}
	if sess.Snapshots == nil {
		sess.Snapshots = make(map[string]json.RawMessage)
	}
	return sess
}

// Update reads the session, lets fn change it and writes it back, holding the
// session's lock throughout so that concurrent updates, from goroutines or
// processes, never lose each other's changes. If fn returns an error nothing
// is written and that error is returned. fn cannot change the session's id.
func (s *SessionStore) Update(id string, fn func(*Session) error) (*Session, error) {
	return s.update(id, fn, false, fsx.Settled)
}

// UpdateDerived is Update for what a call derives from its work and can
// safely lose (the hashes of what it read or wrote, usage counters): the
// file is replaced by rename without fsync. A crash may bring back an older
// session, whose hashes the session did see; losing a read hash makes the
// next write NOT_READ or STALE_FILE, never an unsafe allow. A session file
// torn by a crash fails its MAC and is refused, never trusted.
//
// With batching on (Batch), the change is applied at once to the session
// this store loads, and written within the batch's time together with the
// session's other changes, or at Close.
//
// The session returned is shared as LoadShared's is: never change it.
func (s *SessionStore) UpdateDerived(id string, fn func(*Session) error) (*Session, error) {
	if err := sessionsCheckID(id); err != nil {
		return nil, err
	}
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if s.every <= 0 || s.closed {
		return s.updateLocked(id, fn, false, fsx.Renamed)
	}
	sess, raw, exists, err := s.loadPending(id, false)
	if err != nil {
		return nil, err
	}
	if err := s.checkRefused(sess); err != nil {
		return nil, err
	}
	if err := fn(sess); err != nil {
		return nil, err
	}
	stampSession(sess, id)
	p := s.pending[id]
	if p == nil {
		if s.pending == nil {
			s.pending = map[string]*sessionPending{}
		}
		p = &sessionPending{}
		s.pending[id] = p
	}
	p.fns = append(p.fns, fn)
	// sess is this call's copy: it becomes the pending one, shared from
	// now on (LoadShared), and is never changed again.
	p.raw, p.exists, p.sess = raw, exists, sess
	if s.timer == nil {
		s.timer = time.AfterFunc(s.every, func() { s.Flush() })
	}
	return sess, nil
}

// Batch turns on batching of derived updates (UpdateDerived): they are
// written at most every interval, and at Flush and Close, instead of once
// each. What they hold is derived and safe to lose (see UpdateDerived); a
// process that dies with a batch unwritten leaves the session as it was
// before it, as a crash between two writes would. Only this store sees the
// changes before they are written: a process that has batching on must be
// the one that serves the session's calls.
func (s *SessionStore) Batch(interval time.Duration) {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	s.every = interval
}

// Flush writes the batched changes now. A session whose file was tampered
// with (refused) loses them; it refuses every call anyway.
func (s *SessionStore) Flush() error {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	var errs []error
	for id := range s.pending {
		if _, err := s.updateLocked(id, func(*Session) error { return nil }, false, fsx.Renamed); err != nil {
			if errors.Is(err, ErrSessionRefused) {
				delete(s.pending, id)
			}
			errs = append(errs, err)
		}
	}
	if len(s.pending) > 0 && !s.closed && s.every > 0 {
		s.timer = time.AfterFunc(s.every, func() { s.Flush() }) // try again
	}
	return errors.Join(errs...)
}

// Close writes the batched changes and turns batching off.
func (s *SessionStore) Close() error {
	s.bmu.Lock()
	s.closed = true
	s.bmu.Unlock()
	return s.Flush()
}

func (s *SessionStore) update(id string, fn func(*Session) error, refusing bool, d fsx.Durability) (*Session, error) {
	if err := sessionsCheckID(id); err != nil {
		return nil, err
	}
	s.bmu.Lock()
	defer s.bmu.Unlock()
	return s.updateLocked(id, fn, refusing, d)
}

// updateLocked is update with bmu held. The session's batched changes, if
// any, are applied before fn and written with it.
func (s *SessionStore) updateLocked(id string, fn func(*Session) error, refusing bool, d fsx.Durability) (*Session, error) {
	// The store lives in .orchestration: a command may have swapped it for
	// a link, and the write would follow it out of the workspace.
	if err := CheckIntact(filepath.Dir(s.dir), filepath.Base(s.dir)); err != nil {
		return nil, err
	}
	if err := s.mkdir(); err != nil {
		return nil, err
	}
	lock, err := fsx.Acquire(filepath.Join(s.dir, sessionsBase(id)+".lock"))
	if err != nil {
		return nil, err
	}
	defer lock.Release()

	sess, err := s.loadDisk(id)
	if err != nil && !(refusing && errors.Is(err, ErrSessionRefused)) {
		return nil, err
	}
	if err != nil { // refusing a session whose file was altered: start over, refused
		sess = sessionsInit(&Session{ID: id})
	}
	if p := s.pending[id]; p != nil {
		for _, f := range p.fns {
			f(sess)
		}
	}
	if !refusing {
		if err := s.checkRefused(sess); err != nil {
			return nil, err
		}
	}
	if err := fn(sess); err != nil {
		return nil, err
	}
	stampSession(sess, id)
	data, err := json.Marshal(sess)
	if err != nil {
		return nil, fmt.Errorf("save session %q: %w", id, err)
	}
	data = append(data, '\n')
	mac, err := s.mac(filepath.Base(s.path(id)), data)
	if err != nil {
		return nil, err
	}
	data = append(append(append(data, sessionMACPrefix...), mac...), '\n')
	if err := fsx.Replace(s.path(id), data, 0o644, d); err != nil {
		return nil, fmt.Errorf("save session %q: %w", id, err)
	}
	sess = sessionsInit(sess)
	s.remember(id, data, sess)
	delete(s.pending, id)
	return sess, nil
}

// mkdir creates the sessions directory with a .gitignore of its own, since
// session state is per machine and must not be committed.
func (s *SessionStore) mkdir() error {
	if _, err := os.Stat(s.dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return fmt.Errorf("create sessions directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create sessions directory: %w", err)
	}
	_, err = f.WriteString("*\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// List returns every stored session, sorted by id. Files that cannot be read
// or decoded are named in the returned error; the sessions that could be read
// are returned alongside it.
func (s *SessionStore) List() ([]*Session, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []*Session
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
			continue
		}
		p := filepath.Join(s.dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("list sessions: %w", err))
			continue
		}
		body, err := s.authentic(p, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sess, err := sessionsDecode(p, body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if sessionsBase(sess.ID)+".json" != name {
			errs = append(errs, fmt.Errorf("session file %s holds session %q, which belongs in another file", p, sess.ID))
			continue
		}
		out = append(out, sess)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, errors.Join(errs...)
}

// stampSession names sess id and marks it updated now (and created, the
// first time).
func stampSession(sess *Session, id string) {
	now := time.Now().UTC()
	sess.ID = id
	if sess.Created.IsZero() {
		sess.Created = now
	}
	sess.Updated = now
}
