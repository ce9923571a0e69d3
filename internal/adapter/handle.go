package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/gatecore"
	"github.com/intentgate/intentgate/orchestration"
)

// MaxEventBytes bounds one hook event: a Write carries the whole new file.
const MaxEventBytes = 64 << 20

// Handler answers external agents' hook events. The zero value handles each
// event in the workspace found from it, opening the runtime for that event.
type Handler struct {
	// Workspace, when set, is the workspace of every event; otherwise it is
	// found from the event (see workspace).
	Workspace string
	// OnlyGoverned keeps silent outside governed workspaces, as a global
	// install asks; otherwise changes there are refused.
	OnlyGoverned bool
	// Open returns the runtime of the governed workspace at root and what to
	// call when the event is done with it. Nil opens one per event.
	Open func(root string) (rt *gatecore.Runtime, release func(), err error)
	// Forward offers an event to a daemon serving root; ok is false when
	// none handled it, and the event is then handled here.
	Forward func(ctx context.Context, root, agent string, raw []byte) (r Reply, ok bool)
	// Version is intentgate's version, for runtimes Handle opens itself.
	Version string
	// Stderr receives what the person running the agent should see in the
	// hook's log; nil discards it.
	Stderr io.Writer
}

// Handle answers one event of the named agent in the agent's dialect, and
// returns the hook process's exit status: 2 for an agent it does not know
// (which blocks the call in every agent that reads exit statuses), else 0,
// since a refusal is an answer, not a failure.
func (hd *Handler) Handle(ctx context.Context, agent string, raw []byte) (reply []byte, exit int) {
	d, ok := Lookup(agent)
	if !ok {
		fmt.Fprintf(hd.stderr(), "intentgate hook: unknown agent %q; use one of: %s\n", agent, strings.Join(Names(), ", "))
		return nil, 2
	}
	ev, r := hd.reply(ctx, d, raw)
	return d.Render(ev, r), 0
}

// Reply answers one event in neutral form, for a caller that renders it
// itself (the hook process the daemon answers over its socket).
func (hd *Handler) Reply(ctx context.Context, d Dialect, raw []byte) Reply {
	_, r := hd.reply(ctx, d, raw)
	return r
}

func (hd *Handler) reply(ctx context.Context, d Dialect, raw []byte) (*Event, Reply) {
	var err error
	if len(raw) > MaxEventBytes {
		err = fmt.Errorf("the event is larger than %d bytes", MaxEventBytes)
	}
	ev := &Event{Agent: d.Name()}
	if err == nil {
		ev, err = d.Parse(raw)
	}
	if err == nil {
		ev.unwrapExec()
	}
	if err != nil {
		fmt.Fprintf(hd.stderr(), "intentgate hook %s: cannot read the event: %v\n", d.Name(), err)
		return ev, failReply(ev, "intentgate could not read the hook event: "+err.Error())
	}
	h := &hookRun{hd: hd, ev: ev, errw: hd.stderr(), raw: raw}
	return ev, h.handle(ctx)
}

func (hd *Handler) stderr() io.Writer {
	if hd.Stderr == nil {
		return io.Discard
	}
	return hd.Stderr
}

// failReply is the answer when intentgate cannot decide: refuse a pre-tool
// event (fail closed), tell the person otherwise.
func failReply(ev *Event, why string) Reply {
	if ev.Kind == PreTool || ev.Kind == Unknown {
		d := &engine.Denial{Code: engine.HookError, Tool: ev.Tool, Message: why,
			Hint: "this is not about your request; tell the user, who can check the hook's stderr"}
		return Reply{Deny: string(d.JSON()), Message: "intentgate: " + why}
	}
	return Reply{Message: "intentgate: " + why}
}

// hookRun is one event on its way through the runtime.
type hookRun struct {
	hd   *Handler
	ev   *Event
	raw  []byte // the event as read, for a daemon to handle
	errw io.Writer
	rt   *gatecore.Runtime
	dir  string // the workspace as found, spelled like the agent's paths

	intent, mode string // the session's, for post-hooks
	violation    string // post: why the pre-hooks would have refused the change being recorded
	warnings     []string
	note         string // post: what other sessions changed during a command (gatecore.NoteKey)

	sess       *orchestration.Session // the event's session, loaded once (session)
	sessErr    error
	sessLoaded bool
}

// session is the event's session, loaded once per event: settling pending
// patches, the post event and a session start all read it. Settling a
// patch changes it, and it is loaded again after.
func (h *hookRun) session() (*orchestration.Session, error) {
	if !h.sessLoaded {
		h.sess, h.sessErr = h.sessions().Load(h.ev.Session)
		h.sessLoaded = true
	}
	return h.sess, h.sessErr
}

func (h *hookRun) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(h.errw, "intentgate hook %s: %s\n", h.ev.Agent, msg)
	h.warnings = append(h.warnings, msg)
}

// sessions is the runtime's session store; nil while .orchestration/ is not
// intact (every call is then refused).
func (h *hookRun) sessions() *orchestration.SessionStore {
	if st := h.rt.Stores(); st != nil {
		return st.Sessions
	}
	return nil
}

func (h *hookRun) orch() string { return filepath.Join(h.rt.Root(), orchestration.DirName) }

func (h *hookRun) open(dir string) (*gatecore.Runtime, func(), error) {
	if h.hd.Open != nil {
		return h.hd.Open(dir)
	}
	// A hook event runs no tool (select_active_intent aside), so the
	// runtime has the tools' declarations only: it judges and records as
	// a full one does, and the hook process links no tool implementation.
	rt, err := gatecore.Open(dir, gatecore.Options{Version: h.hd.Version})
	if err != nil {
		return nil, nil, err
	}
	return rt, func() { rt.Close() }, nil
}

func (h *hookRun) handle(ctx context.Context) Reply {
	ev := h.ev
	switch ev.Kind {
	case Unknown, Stop:
		return Reply{}
	case PreTool, PostTool:
		if len(ev.Ops) == 0 {
			return Reply{} // a tool that changes nothing in the workspace
		}
	case Prompt:
		if !strings.Contains(ev.Prompt, "@") {
			return Reply{}
		}
	}
	dir, governed := h.workspace()
	if !governed {
		if h.hd.OnlyGoverned {
			return Reply{}
		}
		return h.ungoverned(dir)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h.dir = dir
	if h.hd.Forward != nil && h.raw != nil {
		if r, ok := h.hd.Forward(ctx, dir, ev.Agent, h.raw); ok {
			return r
		}
	}
	rt, release, err := h.open(dir)
	if err != nil {
		fmt.Fprintf(h.errw, "intentgate hook %s: %v\n", ev.Agent, err)
		return failReply(ev, "cannot open the workspace: "+err.Error())
	}
	defer release()
	h.rt = rt
	// The operations of one event are one turn of the session: no other
	// call of the session comes between them.
	ctx, done, err := rt.Hold(ctx, ev.Session)
	if err != nil {
		return failReply(ev, "the session's earlier calls did not finish: "+err.Error())
	}
	defer done()
	h.settlePending(ctx)
	var r Reply
	switch ev.Kind {
	case PreTool:
		r = h.pre(ctx)
	case PostTool:
		r = h.post(ctx)
	case SessionStart:
		r = h.sessionStart(ctx)
	case Prompt:
		r = h.prompt(ctx)
	}
	if len(h.warnings) > 0 && r.Message == "" {
		r.Message = "intentgate: " + strings.Join(h.warnings, "; ")
	}
	return r
}

// ungoverned answers in a workspace without .orchestration/ whose own hook
// configuration calls intentgate: changes are refused, as the engine refuses
// them when no intents can be loaded, but without opening the engine, which
// would create .orchestration/ there.
func (h *hookRun) ungoverned(dir string) Reply {
	why := fmt.Sprintf("%s is not governed: neither it nor a directory above it has .orchestration/", dir)
	if h.ev.Kind != PreTool {
		return Reply{Message: "intentgate: " + why + "; run `intentgate init` there, or uninstall the hooks"}
	}
	for _, op := range h.ev.Ops {
		if op.Kind == OpRead {
			continue
		}
		return denyReply(&engine.Denial{Code: engine.HookError, Tool: h.ev.Tool,
			Message: why + ", so no intent can be selected and no change is allowed",
			Hint:    "tell the user to run `intentgate init` in the workspace, or to uninstall intentgate's hooks"})
	}
	return Reply{}
}

// workspace finds the governed workspace for the event with gate.Find,
// starting from where the agent works, which is, in order: the project
// directory the agent names in its environment (Claude Code's
// CLAUDE_PROJECT_DIR, Gemini CLI's GEMINI_PROJECT_DIR: the project whose
// settings hold the hook), the event's cwd, and the directories of the files
// the call names, so that a model that cd'ed elsewhere cannot take its calls
// out of governance. Without a governed one, it returns the first start.
func (h *hookRun) workspace() (string, bool) {
	if w := h.hd.Workspace; w != "" {
		_, err := os.Lstat(filepath.Join(w, orchestration.DirName))
		return w, err == nil
	}
	var starts []string
	if env := projectDirEnv(h.ev.Agent); env != "" {
		if v := os.Getenv(env); filepath.IsAbs(v) {
			starts = append(starts, v)
		}
	}
	cwd := h.ev.Cwd
	if cwd == "" || !filepath.IsAbs(cwd) {
		if wd, err := os.Getwd(); err == nil {
			cwd = filepath.Join(wd, cwd)
		}
	}
	starts = append(starts, cwd)
	for _, op := range h.ev.Ops {
		if p := h.abs(op.Path); op.Path != "" && filepath.IsAbs(p) {
			starts = append(starts, filepath.Dir(p))
		}
	}
	for _, s := range starts {
		if root, err := gatecore.Find(s); err == nil {
			return root, true
		}
	}
	return filepath.Clean(starts[0]), false
}

// abs makes an agent's path absolute against its cwd without cleaning it:
// "a/../b" must reach the engine as sent, since a may be a link.
func (h *hookRun) abs(p string) string {
	if filepath.IsAbs(p) || h.ev.Cwd == "" {
		return p
	}
	return strings.TrimRight(h.ev.Cwd, `/\`) + string(filepath.Separator) + p
}

// inside reports whether abs lies, as spelled, in the workspace. Reads
// elsewhere are the agent's own business; writes elsewhere reach the engine,
// which refuses them.
func (h *hookRun) inside(abs string) bool {
	if !filepath.IsAbs(abs) {
		return true
	}
	for _, root := range []string{h.rt.Root(), h.dir} {
		if root == "" {
			continue
		}
		if abs == root || strings.HasPrefix(abs, strings.TrimRight(root, `/\`)+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// call builds the engine call for op number i of the event.
func (h *hookRun) call(i int, tool string, args any) *engine.Call {
	raw, err := json.Marshal(args)
	if err != nil {
		raw = []byte("{}")
	}
	id := h.ev.CallKey()
	if i > 0 {
		id = fmt.Sprintf("%s#%d", id, i)
	}
	return &engine.Call{ID: id, Session: h.ev.Session, Tool: tool, Args: raw, WS: h.rt.Workspace(),
		Agent:  engine.Agent{Name: h.ev.Agent, Model: h.ev.Model},
		Intent: h.intent, Mode: h.mode}
}

// toolFor is the registered tool whose policy an agent's file operation is
// held to. Edits in place are apply_diff's (write_to_file where that is not
// registered); a delete is a write, of nothing, and needs the same rights.
func (h *hookRun) toolFor(k OpKind) string {
	switch k {
	case OpRead:
		return "read_file"
	case OpEdit:
		if _, ok := h.rt.Registry().Lookup("apply_diff"); ok {
			return "apply_diff"
		}
		return "write_to_file"
	case OpWrite, OpDelete:
		return "write_to_file"
	case OpCommand:
		return "execute_command"
	case OpSelect:
		return hooks.SelectTool
	}
	return ""
}

// mcpTool names an MCP call the way the agents do, mcp__<server>__<tool>.
// The registry does not know it, so it counts as mutating.
func mcpTool(op Op) string {
	if op.Server == "" {
		return "mcp__" + op.Name
	}
	return "mcp__" + op.Server + "__" + op.Name
}

func denyReply(d *engine.Denial) Reply {
	return Reply{Deny: string(d.JSON()), Message: fmt.Sprintf("intentgate: %s: %s", d.Code, d.Message)}
}

// asDenial turns any refusal error into the denial the agent is shown.
func asDenial(err error, tool string) *engine.Denial {
	if d, ok := engine.AsDenial(err); ok {
		return d
	}
	return &engine.Denial{Code: engine.HookError, Tool: tool,
		Message: "a policy check failed, so the call is refused: " + err.Error(),
		Hint:    "this is not about your request; report it to the workspace owner and retry later"}
}

// pre authorizes every op of a pre-tool event; the first refusal refuses the
// call. What the post event will need (the file as it was, a picture of the
// workspace) is stored in the session, since the post event is another process.
func (h *hookRun) pre(ctx context.Context) Reply {
	for i, op := range h.ev.Ops {
		if d := h.preOp(ctx, i, op); d != nil {
			if d.NotRecorded != nil {
				h.warnf("the refusal was not recorded: %v", d.NotRecorded)
			}
			return denyReply(agentDenial(h.ev.Agent, d))
		}
	}
	h.keepPending()
	return h.shellReply()
}

func (h *hookRun) preOp(ctx context.Context, i int, op Op) *engine.Denial {
	switch op.Kind {
	case OpRead:
		abs := h.abs(op.Path)
		if !h.inside(abs) {
			return nil
		}
		c := h.call(i, h.toolFor(op.Kind), map[string]any{"path": abs})
		if err := h.rt.Authorize(ctx, c); err != nil {
			return asDenial(err, c.Tool)
		}
		if op.HasShown {
			// Cursor shows the content with the pre event: it is the baseline.
			h.observeRead(ctx, c, op)
		}
	case OpWrite, OpEdit, OpDelete:
		args := map[string]any{"path": h.abs(op.Path)}
		if op.Kind == OpWrite && op.HasContent {
			args["content"] = op.Content
		}
		c := h.call(i, h.toolFor(op.Kind), args)
		if err := h.rt.Authorize(ctx, c); err != nil {
			return asDenial(err, c.Tool)
		}
		if rel, ok, err := c.Target(); err == nil && ok {
			h.savePreImage(rel)
		}
	case OpCommand:
		c := h.call(i, h.toolFor(op.Kind), map[string]any{"command": op.Command})
		if err := h.rt.Authorize(ctx, c); err != nil {
			return asDenial(err, c.Tool)
		}
		if err := h.saveSnapshot(); err != nil {
			d := &engine.Denial{Code: engine.HookError, Tool: c.Tool,
				Message: "the workspace cannot be pictured before the command, so what it changes could not be judged: " + err.Error(),
				Hint:    "this is not about your command; tell the user"}
			return d
		}
	case OpSelect:
		c := h.call(i, h.toolFor(op.Kind), map[string]any{"intent_id": op.IntentID})
		if _, err := h.rt.Dispatch(ctx, c); err != nil {
			var pe *engine.PostError
			if errors.As(err, &pe) {
				h.warnf("the intent was selected but not fully recorded: %v", err)
				return nil
			}
			return asDenial(err, c.Tool)
		}
	case OpMCP:
		return h.preMCP(ctx, i, op)
	}
	return nil
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// post records what the call did. A post-hook failure never undoes the call;
// it is reported to the person and on stderr.
func (h *hookRun) post(ctx context.Context) Reply {
	if h.ev.Session != "" {
		if s, err := h.session(); err == nil {
			h.intent, h.mode = s.Intent, s.Mode
		} else {
			h.warnf("cannot load the session: %v", err)
		}
	}
	var r Reply
	var p pendingPatch
	_, _ = h.takeState(pendingPrefix+h.ev.CallKey(), &p) // the post event came: nothing is pending
	for i, op := range h.ev.Ops {
		switch op.Kind {
		case OpRead:
			if h.ev.Failed || !h.inside(h.abs(op.Path)) {
				continue
			}
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"path": h.abs(op.Path)})
			h.observeRead(ctx, c, op)
		case OpWrite, OpEdit, OpDelete:
			h.violation = ""
			if !h.ev.Failed {
				h.violation = h.postRefusal(ctx, i, op)
			}
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"path": h.abs(op.Path)})
			h.observeFile(ctx, c, op)
			if h.violation != "" {
				r.Block = strings.TrimSpace(r.Block + "\nSCOPE_VIOLATION: " + op.Path + " was changed although intentgate would have refused it (" +
					h.violation + "); the change is recorded in the ledger as a violation. Undo it, or ask the user.")
			}
		case OpCommand:
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"command": op.Command})
			if block := h.observeCommand(ctx, c); block != "" {
				r.Block = strings.TrimSpace(r.Block + "\n" + block)
			}
		case OpMCP:
			if block := h.postMCP(ctx, i, op); block != "" {
				r.Block = strings.TrimSpace(r.Block + "\n" + block)
			}
		case OpSelect:
			if h.ev.Failed || op.IntentID == "" || op.IntentID == h.intent {
				continue
			}
			// The pre event may not have been seen (a matcher that left
			// it out): selecting again is harmless.
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"intent_id": op.IntentID})
			if res, err := h.rt.Dispatch(ctx, c); err == nil && res != nil {
				r.Context = res.Output
				h.intent = c.Intent
			}
		}
	}
	if h.note != "" {
		r.Context = strings.TrimSpace(r.Context + "\n" + h.note)
	}
	return r
}

// observe runs the post-hooks and reports what failed to be recorded.
func (h *hookRun) observe(ctx context.Context, c *engine.Call, res *engine.Result) {
	if err := h.rt.Observe(ctx, c, res); err != nil {
		h.warnf("the call happened but was not fully recorded: %v", err)
	}
}
