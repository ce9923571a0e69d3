package adapter

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Kind is what an event is, whatever the agent calls it.
type Kind int

const (
	Unknown      Kind = iota // an event intentgate has nothing to say about, or could not read
	PreTool                  // a tool is about to run: it may be refused
	PostTool                 // a tool ran: what it did is recorded
	SessionStart             // a session or task begins: context may be injected
	Prompt                   // the user submitted a prompt
	Stop                     // the agent finished its turn or task
)

// OpKind is what a tool call does to the workspace, in intentgate's terms.
type OpKind int

const (
	OpRead    OpKind = iota + 1 // reads a file: the hash lock's baseline
	OpWrite                     // replaces a whole file with given content
	OpEdit                      // changes a file in place
	OpDelete                    // deletes a file
	OpCommand                   // runs a shell command: judged by what it changes
	OpMCP                       // calls a tool of an MCP server
	OpSelect                    // selects the session's intent through intentgate's MCP tool
)

func (k OpKind) String() string {
	switch k {
	case OpRead:
		return "read"
	case OpWrite:
		return "write"
	case OpEdit:
		return "edit"
	case OpDelete:
		return "delete"
	case OpCommand:
		return "command"
	case OpMCP:
		return "mcp"
	case OpSelect:
		return "select"
	}
	return fmt.Sprintf("OpKind(%d)", int(k))
}

// Op is one effect of a tool call. A call may have several (a Codex patch
// touching three files) or none (a search the agent runs on its own).
type Op struct {
	Kind OpKind
	// Path is the file as the agent named it: absolute, or relative to
	// Event.Cwd. It is not cleaned: "a/../b" must reach the engine as sent.
	Path string
	// Content is the new content of an OpWrite, when the payload has it.
	Content    string
	HasContent bool
	Command    string          // OpCommand
	Server     string          // OpMCP: the MCP server's name as the agent knows it
	Name       string          // OpMCP: the tool's name on that server
	Args       json.RawMessage // OpMCP: the tool's arguments
	IntentID   string          // OpSelect
	// Opaque marks an OpCommand that is not a shell command but a tool
	// intentgate cannot classify (Name, Args): it is judged like a command.
	Opaque bool

	// Shown is, for an OpRead, the content the agent was shown, when the
	// payload carries it.
	Shown    []byte
	HasShown bool
	// Partial marks an OpRead of a range of the file rather than all of it.
	Partial bool
	// ShownTrimmed says Shown may lack the file's final newline (Cline
	// shows files by lines): it is compared with that one newline allowed.
	ShownTrimmed bool

	// Before is, after an OpWrite or OpEdit, the file's content before the
	// call, when the payload reports it; Existed says whether there was one.
	Before    []byte
	HasBefore bool
	Existed   bool

	// Edits are, after an OpEdit, the replacements the agent says it made
	// (Cursor's afterFileEdit), so the old content can be worked back.
	Edits []Replacement
}

// Replacement is one old-to-new string replacement an agent reports.
type Replacement struct {
	Old, New string
}

// Event is one hook event in neutral form.
type Event struct {
	Agent   string // the dialect's name, e.g. "claude-code"
	Name    string // the event as the agent names it, e.g. "PreToolUse"
	Kind    Kind
	Session string // the agent's session (conversation, task) id
	// Cwd is the absolute directory the agent works in: relative paths are
	// relative to it, and the workspace is found from it.
	Cwd    string
	Model  string
	CallID string // the agent's id for the tool call, if it gives one
	Tool   string // the agent's tool name
	// Input is the tool's input, the part of the payload a pre and a post
	// event of one call share; it keys the call when there is no CallID.
	Input  json.RawMessage
	Ops    []Op
	Prompt string
	// Failed reports, on a post event, that the tool did not succeed.
	Failed bool
	// Output is, on a post event of a shell command, what the command
	// printed, as the agent reports it (empty when it does not). It is the
	// command's own words: the writes the sandbox refused are read from it
	// and recorded as such, never trusted as a decision.
	Output string
}

// CallKey identifies the call across its pre and post events, which arrive
// in different processes: the agent's call id, or a hash of the tool and its
// input for agents that give none.
func (e *Event) CallKey() string {
	if e.CallID != "" {
		return e.CallID
	}
	h := sha256.New()
	h.Write([]byte(e.Tool))
	h.Write([]byte{0})
	h.Write(canonicalJSON(e.Input))
	return "h-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// canonicalJSON re-encodes raw with sorted keys, so that the same input
// spelled with other whitespace or key order keys the same call.
func canonicalJSON(raw json.RawMessage) []byte {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return raw
	}
	b, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return raw
	}
	return b
}

// Reply is what intentgate answers, in neutral form.
type Reply struct {
	// Deny refuses a pre event; it is the denial JSON the model is shown.
	Deny string
	// Message is one line for the person at the keyboard.
	Message string
	// Context is text the model should see from now on (the intent
	// protocol, the selected intent).
	Context string
	// Block tells the model, after a tool ran, of something it must act on
	// (a command changed files outside its intent's scope).
	Block string
	// Command replaces, on a pre event of a shell tool, the command the
	// agent runs (the same command under `intentgate exec`), where the
	// dialect can rewrite a tool's input.
	Command string
}

// Empty reports whether the reply says nothing.
func (r Reply) Empty() bool {
	return r.Deny == "" && r.Message == "" && r.Context == "" && r.Block == "" && r.Command == ""
}

// Dialect is one agent's hook protocol.
type Dialect interface {
	// Name is the agent's name on the command line, e.g. "claude-code".
	Name() string
	// Parse reads one event. On error the returned event still says as
	// much as could be read (its Name and Kind, if known), so the answer
	// can be given in the right form.
	Parse(raw []byte) (*Event, error)
	// Render answers ev in the agent's dialect. A nil result means the
	// hook prints nothing.
	Render(ev *Event, r Reply) []byte
}

// agents is every agent intentgate speaks to, by the name given on the
// command line (`intentgate hook NAME`): its dialect, and the variable in
// which it tells its hooks the project directory, if it has one.
var agents = []struct {
	name          string
	dialect       Dialect
	projectDirEnv string
}{
	{"claude-code", claude{name: "claude-code"}, "CLAUDE_PROJECT_DIR"},
	{"codex", claude{name: "codex", strict: true}, ""},
	{"gemini", gemini{}, "GEMINI_PROJECT_DIR"},
	{"cursor", cursor{}, ""},
	{"cline", cline{}, ""},
}

// Lookup returns the dialect of the named agent.
func Lookup(name string) (Dialect, bool) {
	for _, a := range agents {
		if a.name == name {
			return a.dialect, true
		}
	}
	return nil, false
}

// projectDirEnv names the variable in which the agent tells its hooks the
// project directory: the project whose settings hold the hook.
func projectDirEnv(name string) string {
	for _, a := range agents {
		if a.name == name {
			return a.projectDirEnv
		}
	}
	return ""
}

// Names returns the agents with a dialect, sorted.
func Names() []string {
	names := make([]string, 0, len(agents))
	for _, a := range agents {
		names = append(names, a.name)
	}
	slices.Sort(names)
	return names
}

// mcpName splits "mcp__server__tool". Server names may themselves hold
// underscores, tool names rarely do: the split is at the last "__".
func mcpName(tool string) (server, name string, ok bool) {
	rest, found := strings.CutPrefix(tool, "mcp__")
	if !found {
		return "", "", false
	}
	i := strings.LastIndex(rest, "__")
	if i <= 0 || i+2 >= len(rest) {
		return "", "", false
	}
	return rest[:i], rest[i+2:], true
}

// IntentgateServer is the name intentgate's own MCP server is registered
// under by `intentgate install`.
const IntentgateServer = "intentgate"

// mcpOp is the op of a call to an MCP tool; intentgate's own
// select_active_intent becomes an OpSelect.
func mcpOp(server, name string, args json.RawMessage) Op {
	if server == IntentgateServer && name == "select_active_intent" {
		var a struct {
			IntentID any `json:"intent_id"`
		}
		_ = json.Unmarshal(args, &a)
		id := ""
		switch v := a.IntentID.(type) {
		case string:
			id = v
		case nil:
		default:
			b, _ := json.Marshal(v)
			id = string(b)
		}
		return Op{Kind: OpSelect, Server: server, Name: name, Args: args, IntentID: id}
	}
	return Op{Kind: OpMCP, Server: server, Name: name, Args: args}
}

// object decodes raw as a JSON object; an absent input is an empty one.
func object(raw json.RawMessage, what string) (map[string]json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]json.RawMessage{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object: %w", what, err)
	}
	if m == nil {
		m = map[string]json.RawMessage{}
	}
	return m, nil
}

// str returns the string at key, or "" if it is absent or null. A value of
// another JSON type is an error: a path given as a number is not a path.
func str(m map[string]json.RawMessage, key string) (string, bool, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, fmt.Errorf("%q is not a string", key)
	}
	return s, true, nil
}

// firstStr returns the first of keys that is present.
func firstStr(m map[string]json.RawMessage, keys ...string) (string, bool, error) {
	for _, k := range keys {
		s, ok, err := str(m, k)
		if err != nil || ok {
			return s, ok, err
		}
	}
	return "", false, nil
}

// requirePath returns the path parameter an op cannot do without.
func requirePath(m map[string]json.RawMessage, tool string, keys ...string) (string, error) {
	p, ok, err := firstStr(m, keys...)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	if !ok || p == "" {
		return "", fmt.Errorf("%s: the input has no %q", tool, keys[0])
	}
	return p, nil
}

// present reports whether key holds something other than null, 0 or "".
func present(m map[string]json.RawMessage, key string) bool {
	raw, ok := m[key]
	if !ok {
		return false
	}
	switch strings.TrimSpace(string(raw)) {
	case "null", "0", `""`, "false":
		return false
	}
	return true
}

// marshal encodes v without HTML escaping, so that "<" in a reason stays
// readable to the model.
func marshal(v any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte(`{}` + "\n")
	}
	return []byte(b.String())
}
