package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/intentgate/intentgate/cmd/intentgate/internal/agents"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/spf13/cobra"
)

// maxHookBytes bounds one hook event: a Write carries the whole new file.
const maxHookBytes = 64 << 20

type hookOptions struct {
	workspace    string    // overrides the workspace found from the event
	onlyGoverned bool      // stay silent outside workspaces that have .orchestration/
	warm         *governed // a workspace kept open across events (the daemon's)
	noDaemon     bool      // do the work here, never through a running daemon
}

func newHookCmd() *cobra.Command {
	o := &hookOptions{}
	cmd := &cobra.Command{
		Use:   "hook AGENT",
		Short: "Answer one hook event of an external agent, in its own dialect",
		Long: `hook reads one hook event of an external coding agent on stdin and answers
on stdout in that agent's dialect: ` + strings.Join(agents.Names(), ", ") + `.

Pre-tool events pass intentgate's pre-hooks (the call may be refused), post-tool
events its post-hooks (what the call changed is recorded in the ledger).
Session starts get the intent protocol and the declared intents as context, and
a prompt naming @INT-001 selects that intent for the session.

The workspace is the nearest directory with .orchestration/, looking upwards
from the project directory the agent names (CLAUDE_PROJECT_DIR,
GEMINI_PROJECT_DIR), then from the event's cwd, then from the files the call
names. Where none has it, changes are refused (the workspace's own hook
configuration asks for governance) and nothing is created there; with
--only-governed, what a global install writes, hook says nothing instead.

A refusal is an answer, not a failure: hook exits 0 and prints the refusal in
the agent's form. An event it cannot read is refused, with the reason on
stderr. "intentgate install AGENT" writes the agent's hook configuration.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, ok := agents.Lookup(args[0])
			if !ok {
				// Exit 2 blocks the call in every agent that reads exit codes.
				return &exitError{code: 2, err: fmt.Errorf("unknown agent %q; use one of: %s", args[0], strings.Join(agents.Names(), ", "))}
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			out := runHook(ctx, o, d, cmd.InOrStdin(), cmd.ErrOrStderr())
			_, err := cmd.OutOrStdout().Write(out)
			return err
		},
	}
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", "", "the workspace directory (default: found from the event's cwd)")
	cmd.Flags().BoolVar(&o.onlyGoverned, "only-governed", false, "say nothing in workspaces without .orchestration/")
	return cmd
}

// runHook answers one event; it never fails, since every failure has an
// answer of its own: refuse a pre-tool event, report the rest.
func runHook(ctx context.Context, o *hookOptions, d agents.Dialect, in io.Reader, errw io.Writer) []byte {
	raw, err := io.ReadAll(io.LimitReader(in, maxHookBytes+1))
	if err == nil && len(raw) > maxHookBytes {
		err = fmt.Errorf("the event is larger than %d bytes", maxHookBytes)
	}
	ev := &agents.Event{Agent: d.Name()}
	if err == nil {
		ev, err = d.Parse(raw)
	}
	if err != nil {
		fmt.Fprintf(errw, "intentgate hook %s: cannot read the event: %v\n", d.Name(), err)
		return d.Render(ev, failReply(ev, "intentgate could not read the hook event: "+err.Error()))
	}
	h := &hookRun{o: o, ev: ev, errw: errw, raw: raw}
	return d.Render(ev, h.handle(ctx))
}

// failReply is the answer when intentgate cannot decide: refuse a pre-tool
// event (fail closed), tell the person otherwise.
func failReply(ev *agents.Event, why string) agents.Reply {
	if ev.Kind == agents.PreTool || ev.Kind == agents.Unknown {
		d := &engine.Denial{Code: engine.HookError, Tool: ev.Tool, Message: why,
			Hint: "this is not about your request; tell the user, who can check the hook's stderr"}
		return agents.Reply{Deny: string(d.JSON()), Message: "intentgate: " + why}
	}
	return agents.Reply{Message: "intentgate: " + why}
}

// hookRun is one event on its way through the engine.
type hookRun struct {
	o    *hookOptions
	ev   *agents.Event
	raw  []byte // the event as read, for a daemon to handle
	errw io.Writer
	g    *governed
	dir  string // the workspace as found, spelled like the agent's paths

	intent, mode string // the session's, for post-hooks
	cfg          *hookConfig
	warnings     []string
}

func (h *hookRun) warnf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(h.errw, "intentgate hook %s: %s\n", h.ev.Agent, msg)
	h.warnings = append(h.warnings, msg)
}

func (h *hookRun) handle(ctx context.Context) agents.Reply {
	ev := h.ev
	switch ev.Kind {
	case agents.Unknown, agents.Stop:
		return agents.Reply{}
	case agents.PreTool, agents.PostTool:
		if len(ev.Ops) == 0 {
			return agents.Reply{} // a tool that changes nothing in the workspace
		}
	case agents.Prompt:
		if !strings.Contains(ev.Prompt, "@") {
			return agents.Reply{}
		}
	}
	dir, governed := h.workspace()
	if !governed {
		if h.o.onlyGoverned {
			return agents.Reply{}
		}
		return h.ungoverned(dir)
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h.dir = dir
	if r, ok := h.viaDaemon(ctx, dir); ok {
		return r
	}
	g, release, err := h.o.open(dir)
	if err != nil {
		fmt.Fprintf(h.errw, "intentgate hook %s: %v\n", ev.Agent, err)
		return failReply(ev, "cannot open the workspace: "+err.Error())
	}
	defer release()
	h.g = g
	var r agents.Reply
	switch ev.Kind {
	case agents.PreTool:
		r = h.pre(ctx)
	case agents.PostTool:
		r = h.post(ctx)
	case agents.SessionStart:
		r = h.sessionStart(ctx)
	case agents.Prompt:
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
func (h *hookRun) ungoverned(dir string) agents.Reply {
	why := fmt.Sprintf("%s is not governed: neither it nor a directory above it has .orchestration/", dir)
	if h.ev.Kind != agents.PreTool {
		return agents.Reply{Message: "intentgate: " + why + "; run `intentgate init` there, or uninstall the hooks"}
	}
	for _, op := range h.ev.Ops {
		if op.Kind == agents.OpRead {
			continue
		}
		return denyReply(&engine.Denial{Code: engine.HookError, Tool: h.ev.Tool,
			Message: why + ", so no intent can be selected and no change is allowed",
			Hint:    "tell the user to run `intentgate init` in the workspace, or to uninstall intentgate's hooks"})
	}
	return agents.Reply{}
}

// workspace finds the governed directory for the event: the nearest one,
// from where the agent works upwards, that has .orchestration/; else the git
// root; else that directory. Where the agent works is, in order: the project
// directory the agent names in its environment (Claude Code's
// CLAUDE_PROJECT_DIR, Gemini CLI's GEMINI_PROJECT_DIR: the project whose
// settings hold the hook), the event's cwd, and the directories of the files
// the call names, so that a model that cd'ed elsewhere cannot take its calls
// out of governance. Walking up lexically keeps the agent's spelling of the
// path, which is how its absolute paths begin.
func (h *hookRun) workspace() (string, bool) {
	if h.o.workspace != "" {
		_, err := os.Lstat(filepath.Join(h.o.workspace, ".orchestration"))
		return h.o.workspace, err == nil
	}
	var starts []string
	if env := projectDirEnv[h.ev.Agent]; env != "" {
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
	first := ""
	for _, s := range starts {
		dir, governed := findWorkspace(s)
		if governed {
			return dir, true
		}
		if first == "" {
			first = dir
		}
	}
	return first, false
}

// projectDirEnv names the variable in which an agent tells its hooks the
// project directory.
var projectDirEnv = map[string]string{
	"claude-code": "CLAUDE_PROJECT_DIR",
	"gemini":      "GEMINI_PROJECT_DIR",
}

func findWorkspace(start string) (string, bool) {
	start = filepath.Clean(start)
	gitRoot := ""
	for dir := start; ; {
		// Lstat: a .orchestration replaced by a link still marks the
		// workspace as governed, and the engine then refuses every call.
		if _, err := os.Lstat(filepath.Join(dir, ".orchestration")); err == nil {
			return dir, true
		}
		if gitRoot == "" {
			if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
				gitRoot = dir
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if gitRoot != "" {
		return gitRoot, false
	}
	return start, false
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
	for _, root := range []string{h.g.ws.Dir, h.dir} {
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
	return &engine.Call{ID: id, Session: h.ev.Session, Tool: tool, Args: raw, WS: h.g.ws,
		Agent:  engine.Agent{Name: h.ev.Agent, Model: h.ev.Model},
		Intent: h.intent, Mode: h.mode}
}

// toolFor is the registered tool whose policy an agent's file operation is
// held to. Edits in place are apply_diff's (write_to_file where that is not
// registered); a delete is a write, of nothing, and needs the same rights.
func (h *hookRun) toolFor(k agents.OpKind) string {
	switch k {
	case agents.OpRead:
		return "read_file"
	case agents.OpEdit:
		if _, ok := h.g.eng.Registry().Lookup("apply_diff"); ok {
			return "apply_diff"
		}
		return "write_to_file"
	case agents.OpWrite, agents.OpDelete:
		return "write_to_file"
	case agents.OpCommand:
		return "execute_command"
	case agents.OpSelect:
		return hooks.SelectTool
	}
	return ""
}

// mcpTool names an MCP call the way the agents do, mcp__<server>__<tool>.
// The registry does not know it, so it counts as mutating.
func mcpTool(op agents.Op) string {
	if op.Server == "" {
		return "mcp__" + op.Name
	}
	return "mcp__" + op.Server + "__" + op.Name
}

func denyReply(d *engine.Denial) agents.Reply {
	return agents.Reply{Deny: string(d.JSON()), Message: fmt.Sprintf("intentgate: %s: %s", d.Code, d.Message)}
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
func (h *hookRun) pre(ctx context.Context) agents.Reply {
	for i, op := range h.ev.Ops {
		if d := h.preOp(ctx, i, op); d != nil {
			return denyReply(d)
		}
	}
	return h.shellReply()
}

func (h *hookRun) preOp(ctx context.Context, i int, op agents.Op) *engine.Denial {
	g := h.g
	switch op.Kind {
	case agents.OpRead:
		abs := h.abs(op.Path)
		if !h.inside(abs) {
			return nil
		}
		c := h.call(i, h.toolFor(op.Kind), map[string]any{"path": abs})
		if err := g.eng.Authorize(ctx, c); err != nil {
			return asDenial(err, c.Tool)
		}
		if op.HasShown {
			// Cursor shows the content with the pre event: it is the baseline.
			h.observeRead(ctx, c, op)
		}
	case agents.OpWrite, agents.OpEdit, agents.OpDelete:
		args := map[string]any{"path": h.abs(op.Path)}
		if op.Kind == agents.OpWrite && op.HasContent {
			args["content"] = op.Content
		}
		c := h.call(i, h.toolFor(op.Kind), args)
		if err := g.eng.Authorize(ctx, c); err != nil {
			return asDenial(err, c.Tool)
		}
		if rel, ok, err := c.Target(); err == nil && ok {
			h.savePreImage(rel)
		}
	case agents.OpCommand:
		c := h.call(i, h.toolFor(op.Kind), map[string]any{"command": op.Command})
		if err := g.eng.Authorize(ctx, c); err != nil {
			return asDenial(err, c.Tool)
		}
		if err := h.saveSnapshot(); err != nil {
			d := &engine.Denial{Code: engine.HookError, Tool: c.Tool,
				Message: "the workspace cannot be pictured before the command, so what it changes could not be judged: " + err.Error(),
				Hint:    "this is not about your command; tell the user"}
			return d
		}
	case agents.OpSelect:
		c := h.call(i, h.toolFor(op.Kind), map[string]any{"intent_id": op.IntentID})
		if _, err := g.eng.Dispatch(ctx, c); err != nil {
			var pe *engine.PostError
			if errors.As(err, &pe) {
				h.warnf("the intent was selected but not fully recorded: %v", err)
				return nil
			}
			return asDenial(err, c.Tool)
		}
	case agents.OpMCP:
		if op.Server == agents.IntentgateServer {
			return nil // intentgate's own MCP server governs its tools itself
		}
		args := op.Args
		if len(args) == 0 || args[0] != '{' {
			b, _ := json.Marshal(map[string]json.RawMessage{"arguments": orNull(args)})
			args = b
		}
		c := h.call(i, mcpTool(op), args)
		if err := g.eng.Authorize(ctx, c); err != nil {
			return asDenial(err, c.Tool)
		}
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
func (h *hookRun) post(ctx context.Context) agents.Reply {
	if h.ev.Session != "" {
		if s, err := h.g.sessions.Load(h.ev.Session); err == nil {
			h.intent, h.mode = s.Intent, s.Mode
		} else {
			h.warnf("cannot load the session: %v", err)
		}
	}
	var r agents.Reply
	for i, op := range h.ev.Ops {
		switch op.Kind {
		case agents.OpRead:
			if h.ev.Failed || !h.inside(h.abs(op.Path)) {
				continue
			}
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"path": h.abs(op.Path)})
			h.observeRead(ctx, c, op)
		case agents.OpWrite, agents.OpEdit, agents.OpDelete:
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"path": h.abs(op.Path)})
			h.observeFile(ctx, c, op)
		case agents.OpCommand:
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"command": op.Command})
			if block := h.observeCommand(ctx, c); block != "" {
				r.Block = strings.TrimSpace(r.Block + "\n" + block)
			}
		case agents.OpSelect:
			if h.ev.Failed || op.IntentID == "" || op.IntentID == h.intent {
				continue
			}
			// The pre event may not have been seen (a matcher that left
			// it out): selecting again is harmless.
			c := h.call(i, h.toolFor(op.Kind), map[string]any{"intent_id": op.IntentID})
			if res, err := h.g.eng.Dispatch(ctx, c); err == nil && res != nil {
				r.Context = res.Output
				h.intent = c.Intent
			}
		}
	}
	return r
}

// observe runs the post-hooks and reports what failed to be recorded.
func (h *hookRun) observe(ctx context.Context, c *engine.Call, res *engine.Result) {
	if err := h.g.eng.Observe(ctx, c, res); err != nil {
		h.warnf("the call happened but was not fully recorded: %v", err)
	}
}
