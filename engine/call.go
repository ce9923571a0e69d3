package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// Agent identifies who issued a call.
type Agent struct {
	Name  string `json:"name,omitempty"`
	Model string `json:"model,omitempty"`
}

// Call is one tool invocation on its way through the engine.
type Call struct {
	ID      string
	Session string
	Tool    string
	Args    json.RawMessage
	Agent   Agent
	WS      *Workspace

	// Set by pre-hooks for the tool and the post-hooks.

	// Intent is the session's active intent id, once the gatekeeper found one.
	Intent string
	// Mode is the session's mode slug, if any.
	Mode string
	// Expect holds hash preconditions the tool must re-check under the per-file
	// lock right before it replaces a file: canonical path -> lowercase hex
	// SHA-256 of the content it must still have ("" means it must not exist).
	Expect map[string]string

	args   map[string]json.RawMessage
	strs   map[string]string // string arguments, decoded once
	target *target
	spec   *Spec // resolved by the engine, once per call
	memo   map[any]any

	// Directory fsyncs the call's renames still need (Workspace.Edit
	// under Dispatch leaves them here so that they run together with the
	// ledger's fsync, in one round of the disk, not two).
	laterSync bool
	dirs      []pendingDir
	runsNow   bool

	// The journal slots holding the entries of the call's changes, until
	// their records are in (JournalDone).
	journal []callSlot
}

// ToolRunsNow reports whether the call's tool runs in this process right
// after the pre-hooks, with nobody asked in between (Dispatch without an
// approval). A pre-hook whose check the tool repeats under its file lock
// (the hash lock: Workspace.Edit checks Expect on the content it reads)
// may then leave the check to the tool instead of reading the file first.
func (c *Call) ToolRunsNow() bool { return c.runsNow }

// deferDirSyncs lets Workspace.Edit leave its directory fsync to
// SyncPending; Dispatch sets it and calls SyncPending before it returns.
func (c *Call) deferDirSyncs() { c.laterSync = true }

// pendingDir is a directory whose fsync is still due, and what to run once
// it is done with.
type pendingDir struct {
	f    *os.File
	done func()
}

// syncLater keeps d (an open directory) to be fsynced by SyncPending, or
// fsyncs it now when nobody will call SyncPending; done runs once d is no
// longer needed.
func (c *Call) syncLater(d *os.File, done func()) error {
	if c == nil || !c.laterSync {
		defer done()
		return syncDirFile(d)
	}
	c.dirs = append(c.dirs, pendingDir{d, done})
	return nil
}

// SyncPending fsyncs, at the same time, the directories whose renames this
// call made and has not synced yet, and returns the first error. Dispatch
// runs it before it returns, so that nothing is acknowledged before its
// rename is durable.
func (c *Call) SyncPending() error { return c.StartPendingSync()() }

// StartPendingSync starts the fsyncs SyncPending would do and returns at
// once; the function it returns waits for them and returns the first
// error. The trace starts them before it appends the call's record and
// waits after the ledger's own fsync, so that a governed write waits for
// the disk twice (its new content with its journal entry, then its
// directory with its record), like a plain durable write, with one thread
// in a system call at a time.
func (c *Call) StartPendingSync() (wait func() error) {
	if c == nil || len(c.dirs) == 0 {
		return func() error { return nil }
	}
	dirs := c.dirs
	c.dirs = nil
	var files []*os.File
	for _, d := range dirs {
		if !slices.Contains(files, d.f) {
			files = append(files, d.f) // the same directory, synced once
		}
	}
	s := startDirSyncs(files)
	return func() error {
		errs := s.wait()
		for _, d := range dirs {
			d.done()
		}
		return errors.Join(errs...)
	}
}

// Memo returns what a hook stored for this call under key (SetMemo), so
// that per-call facts (the session, loaded once) are shared by every hook
// of the call instead of being looked up again.
func (c *Call) Memo(key any) (any, bool) {
	v, ok := c.memo[key]
	return v, ok
}

// SetMemo stores v under key for the rest of the call. Keys are values of
// an unexported type of the package that sets them, as with context keys.
func (c *Call) SetMemo(key, v any) {
	if c.memo == nil {
		c.memo = map[any]any{}
	}
	c.memo[key] = v
}

// Spec returns the registered tool of the call, resolved once by the engine
// before any hook runs, so that policies never look it up themselves. known
// is false for a tool the registry does not know, or a call no engine has
// resolved: such a call counts as mutating.
func (c *Call) Spec() (spec Spec, known bool) {
	if c.spec == nil || c.spec.Name == "" {
		return Spec{Name: c.Tool}, false
	}
	return *c.spec, true
}

// Mutating reports whether the call can change the workspace: per call for
// a tool that is a Classifier, by its group otherwise; a tool the registry
// does not know counts as mutating.
func (c *Call) Mutating() bool {
	spec, known := c.Spec()
	if !known {
		return true
	}
	if cl, ok := spec.Tool.(Classifier); ok {
		return cl.Mutates(c)
	}
	return spec.Mutating()
}

type target struct {
	rel  string
	ok   bool
	err  error
	look lookedUp
}

// Target returns the canonical workspace path of the call's "path" argument,
// resolved once per call so that every hook and the tool see the same file.
// ok is false when the call has no path.
func (c *Call) Target() (rel string, ok bool, err error) {
	if c.target == nil {
		t := &target{}
		var p string
		p, t.ok, t.err = c.Path()
		if t.ok && t.err == nil {
			if c.WS == nil {
				t.err = errors.New("call has no workspace")
			} else {
				t.rel, t.look, t.err = c.WS.canonical(p)
			}
		}
		if d, isDenial := AsDenial(t.err); isDenial && d.Tool == "" {
			d.Tool = c.Tool
		}
		c.target = t
	}
	return c.target.rel, c.target.ok, c.target.err
}

// TargetStat is the Lstat of the call's target (Target) that resolving it
// made, for a hook deciding whether the file exists as the call starts: ok
// is false when there is none (the path went through a symlink, or its
// directory was not open yet); then the hook looks itself (Workspace.Stat).
// err is nil or fs.ErrNotExist's. Whatever a hook decides on it, Workspace.Edit
// checks the file again under its lock.
func (c *Call) TargetStat() (fi fs.FileInfo, ok bool, err error) {
	if _, tok, terr := c.Target(); !tok || terr != nil || !c.target.look.ok {
		return nil, false, nil
	}
	return c.target.look.fi, true, c.target.look.err
}

// SetArgs sets the call's arguments to raw together with its members, as
// SplitObject split them from a call line (its nested members of "args"),
// so that they are not split again. members must be raw's, each key once.
func (c *Call) SetArgs(raw json.RawMessage, members map[string]json.RawMessage) {
	c.Args, c.args, c.strs = raw, members, nil
}

// Arg returns the raw JSON of argument name, or nil.
func (c *Call) Arg(name string) (json.RawMessage, error) {
	if c.args == nil {
		if len(c.Args) == 0 || string(c.Args) == "null" {
			c.args = map[string]json.RawMessage{}
		} else if m, ok := splitArgs(c.Args); ok {
			c.args = m
		} else if err := json.Unmarshal(c.Args, &c.args); err != nil {
			return nil, &Denial{Code: InvalidArgument, Tool: c.Tool,
				Message: "arguments are not a JSON object: " + err.Error(),
				Hint:    `send the arguments as a JSON object, e.g. {"path":"src/a.go"}`}
		}
	}
	return c.args[name], nil
}

// String returns string argument name. A missing or null argument yields
// ok=false; a value of another JSON type is an INVALID_ARGUMENT denial.
// Numbers and booleans are accepted in their JSON spelling, because models
// routinely send "line": 3 where a string was declared and vice versa.
func (c *Call) String(name string) (string, bool, error) {
	if s, ok := c.strs[name]; ok {
		return s, true, nil
	}
	raw, err := c.Arg(name)
	if err != nil || raw == nil || string(raw) == "null" {
		return "", false, err
	}
	s, ok := unquote(raw)
	if !ok && json.Unmarshal(raw, &s) == nil {
		ok = true
	}
	if ok {
		if c.strs == nil {
			c.strs = map[string]string{}
		}
		c.strs[name] = s
		return s, true, nil
	}
	t := strings.TrimSpace(string(raw))
	if t != "" && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9') || t == "true" || t == "false") {
		return t, true, nil
	}
	return "", false, &Denial{Code: InvalidArgument, Tool: c.Tool, Parameter: name,
		Message: fmt.Sprintf("parameter %q must be a string", name)}
}

// Require returns string argument name or a MISSING_PARAMETER denial.
func (c *Call) Require(name string) (string, error) {
	s, ok, err := c.String(name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", &Denial{Code: MissingParameter, Tool: c.Tool, Parameter: name,
			Message: fmt.Sprintf("%s needs the parameter %q", c.Tool, name),
			Hint:    fmt.Sprintf("call %s again with %q set", c.Tool, name)}
	}
	return s, nil
}

// Path returns the call's "path" argument, the file the call targets, if any.
func (c *Call) Path() (string, bool, error) { return c.String("path") }

// SetExpect records a precondition on path for the tool to re-check.
func (c *Call) SetExpect(path, sha string) {
	if c.Expect == nil {
		c.Expect = map[string]string{}
	}
	c.Expect[path] = sha
}

// FileChange is one file a call changed, with its content on both sides, so
// post-hooks never re-read a file someone may have changed since.
type FileChange struct {
	Path      string // canonical workspace-relative slash path
	Before    []byte
	After     []byte
	Existed   bool // the file existed before
	Deleted   bool // the file no longer exists
	Violation bool // changed outside the intent's scope (by a command)
	// Uninspected marks a path a command may have changed but whose content
	// could not be inspected (a name too long for the kernel, an unreadable
	// directory): it cannot be judged, so it is never taken as in scope.
	Uninspected bool
	// BeforeUnknown says Before is not the old content (a large file a
	// command changed): no before hash is recorded for it.
	BeforeUnknown bool
	Reason        string
	// BeforeSHA256 and AfterSHA256 are the hashes of Before and After
	// when whoever made the change computed them (Workspace.Edit does), so
	// that the policies and the trace do not hash the content again; ""
	// when not known yet. BeforeHash and AfterHash fill them in.
	BeforeSHA256 string
	AfterSHA256  string
}

// BeforeHash returns the hash of Before, computing it at most once.
func (ch *FileChange) BeforeHash() string {
	if ch.BeforeSHA256 == "" {
		ch.BeforeSHA256 = Hash(ch.Before)
	}
	return ch.BeforeSHA256
}

// AfterHash returns the hash of After, computing it at most once.
func (ch *FileChange) AfterHash() string {
	if ch.AfterSHA256 == "" {
		ch.AfterSHA256 = Hash(ch.After)
	}
	return ch.AfterSHA256
}

// FileRead is a whole or partial read of a file, for the hash lock baseline.
type FileRead struct {
	Path   string
	SHA256 string // hex of the whole file's bytes
	Whole  bool
}

// Result is what a tool returns.
type Result struct {
	Output  string
	Changes []FileChange
	Reads   []FileRead
	// Data carries structured output for front doors (e.g. session effects).
	Data map[string]any
}
