// Package gatecore is intentgate's governed runtime: one workspace under
// governance, built once and used by every front door (dispatch, the MCP
// server, the external agents' hooks, the daemon, the agent loop). Package
// gate opens it with every tool intentgate runs; a hook process, which runs
// no tool, opens it here with the tools' declarations alone and so links
// none of their implementations (see Options.Extend).
//
// Open builds, in one place, the stores of .orchestration/, the engine with
// every policy in its order, and the tool registry. The front doors only
// translate their protocol into engine.Call values and hand them to
// Dispatch (intentgate runs the tool), or to Authorize and Observe (an
// external agent runs it). The runtime fills in the call's workspace, runs
// the calls of one session one at a time, in the order they arrive, while
// different sessions run concurrently, and judges what a shell command
// changed the same way whichever door it came through: the changes are
// judged against the session's intent, on_violation (report | revert) from
// .orchestration/config.yaml is applied, the model is told, and the ledger
// records the changes with the command that caused them.
package gatecore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/catalog/spec"
	"github.com/intentgate/intentgate/internal/sandbox"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/orchestration/audit/snap"
	"github.com/intentgate/intentgate/tools/picture"
)

// CommandTimeout bounds execute_command.
const CommandTimeout = 2 * time.Minute

// Options tune a Runtime.
type Options struct {
	// Version is intentgate's version, written into ledger records.
	Version string
	// Extend builds the tools calls run (package gate gives every tool
	// intentgate has). Nil registers every declared tool (package spec)
	// without its implementation: such a runtime judges calls (Authorize,
	// Check, Observe, ObserveCommand) exactly as a full one does, and runs
	// only select_active_intent; any other tool it is asked to run fails.
	Extend func(Deps) Extension
}

// Deps is what Options.Extend builds the tools over.
type Deps struct {
	Workspace *engine.Workspace
	Intents   hooks.Intents
	Stores    *orchestration.Stores
	// Orch is the workspace's .orchestration directory.
	Orch string
	// Command are the runtime's hooks for execute_command.
	Command CommandHooks
}

// CommandHooks are what the runtime does around an execute_command it runs
// (tools.CommandOptions has their contracts).
type CommandHooks struct {
	Settle      func(ctx context.Context, c *engine.Call, before *picture.StoredSnapshot, r *engine.Result) error
	Confine     func(c *engine.Call) (*sandbox.Policy, error)
	Picture     func() (*picture.StoredSnapshot, error)
	Detached    func(ctx context.Context, c *engine.Call, before *picture.StoredSnapshot, output string) (*engine.Result, error)
	KeptRunning func(c *engine.Call)
}

// Extension is the tools Options.Extend built.
type Extension struct {
	// Registry is every tool calls may name.
	Registry *engine.Registry
	// ArgsOf gives the path arguments of tools whose arguments nest (MCP),
	// for the scope policy; nil when there are none.
	ArgsOf hooks.ArgsOf
	// Pre returns pre-hooks run after the built-in ones, given the
	// registry calls go through.
	Pre func(reg *engine.Registry) []engine.PreHook
	// Close releases what the tools hold; nil when nothing.
	Close func()
	// Value is kept for the front door (Runtime.Extension).
	Value any
}

// Runtime is one governed workspace. It is safe for concurrent use.
type Runtime struct {
	ws      *engine.Workspace
	eng     *engine.Engine
	stores  *orchestration.Stores // nil when .orchestration/ is not intact
	intents hooks.Intents
	git     *orchestration.Git
	audit   *hooks.CommandAudit
	trace   *hooks.Trace
	orch    string
	turns   turns
	ext     Extension
	kept    keptCommands
}

// failedIntents stands in for an intents file that could not be loaded: every
// question about intents fails, so every mutating call is refused.
type failedIntents struct{ err error }

func (f failedIntents) Current() (*orchestration.IntentSet, error) { return nil, f.err }

// Open opens the governed workspace at root, the directory holding
// .orchestration/ (Find finds it). It never creates .orchestration/: a root
// without one is an error that names `intentgate init`.
func Open(root string, opts Options) (*Runtime, error) {
	tuneMemory()
	ws, err := engine.OpenWorkspace(root)
	if err != nil {
		return nil, err
	}
	rt := &Runtime{ws: ws, orch: ws.Abs(orchestration.DirName)}
	if !isGoverned(ws.Dir) {
		ws.Close()
		return nil, fmt.Errorf("%s is not governed: it has no %s/; run `intentgate init` there first", root, orchestration.DirName)
	}
	if err := orchestration.CheckIntact(rt.orch); err != nil {
		// Nothing may be opened through a redirected directory; every call
		// is answered with the refusal that says why.
		rt.eng = engine.New(engine.NewRegistry())
		rt.eng.Use(hooks.Intact(rt.orch))
		return rt, nil
	}
	if rt.stores, err = orchestration.Open(ws.Dir); err != nil {
		ws.Close()
		return nil, err
	}
	st := rt.stores
	// This process serves the sessions' calls: what they derive is
	// written in batches, and at Close.
	st.Sessions.Batch(orchestration.BatchEvery)
	if st.Intents != nil {
		rt.intents = st.Intents
	} else {
		rt.intents = failedIntents{st.IntentsErr}
	}
	// Opened when a record first needs the revision: a process that
	// records nothing (a hook answering a read) never opens it.
	rt.git = orchestration.LazyGit(ws.Dir)

	d := Deps{Workspace: ws, Intents: rt.intents, Stores: st, Orch: rt.orch,
		Command: CommandHooks{Settle: rt.settle, Confine: rt.confineCommand, Picture: rt.Picture,
			Detached: rt.observeKeptRunning, KeptRunning: rt.keptRunning}}
	if opts.Extend != nil {
		rt.ext = opts.Extend(d)
	} else {
		rt.ext = Extension{Registry: declared(d), ArgsOf: mcpArgsUnreadable}
	}
	if rt.ext.ArgsOf == nil {
		rt.ext.ArgsOf = func(*engine.Call) (json.RawMessage, string, bool) { return nil, "", false }
	}
	usage := hooks.NewUsage(st.Sessions)
	reg := usage.Tools(rt.ext.Registry)
	hl := hooks.NewHashLock(st.Sessions)
	modes := hooks.NewModes(st.Sessions, st.Modes, spec.Always())
	rt.audit = hooks.NewCommandAudit(ws, rt.intents)
	tr := hooks.NewTrace(hooks.TraceConfig{
		Ledger: st.Ledger, Git: rt.git, Version: opts.Version,
		Then: []hooks.Recorder{
			hooks.NewIntentMap(rt.intents, rt.orch, st.Ledger),
			// Line fingerprints of each version, so blame can follow lines
			// that later edits move.
			snap.NewCapture(ws.Dir, st.Ledger.Path()),
		},
	})
	rt.trace = tr
	e := engine.New(reg)
	e.Use(
		hooks.Intact(rt.orch),
		hooks.Gatekeeper(rt.intents, st.Sessions),
		modes,
		hooks.Protected(ws),
		hooks.Scope(rt.intents),
		hooks.PathArgScope(reg, ws, rt.intents, rt.ext.ArgsOf),
		hl,
	)
	if rt.ext.Pre != nil {
		e.Use(rt.ext.Pre(reg)...)
	}
	e.After(
		rt.audit,
		hl,
		modes,
		tr,
		usage,
	)
	e.OnDenial(tr, usage)
	e.Finally(hooks.NewSessionWriter(st.Sessions))
	rt.eng = e
	return rt, nil
}

// Close writes what the runtime held back (FlushDerived) and releases the
// workspace's stores.
func (rt *Runtime) Close() error {
	if rt.trace != nil {
		rt.trace.Close()
	}
	if rt.ext.Close != nil {
		rt.ext.Close()
	}
	if rt.stores != nil {
		if err := rt.stores.Close(); err != nil {
			// The sessions' last batch: no call is left to report it to.
			fmt.Fprintf(os.Stderr, "intentgate: closing %s: %v\n", rt.orch, err)
		}
	}
	return rt.ws.Close()
}

// FlushDerived writes now what the runtime writes in batches (the
// sessions' read hashes and counters, intent_map.md), for a front door
// about to show them or hand the session to another process; Close does it
// too.
func (rt *Runtime) FlushDerived() error {
	var errs []error
	if rt.stores != nil {
		errs = append(errs, rt.stores.Sessions.Flush())
	}
	if rt.trace != nil {
		errs = append(errs, rt.trace.Flush())
	}
	return errors.Join(errs...)
}

// Extension is the Value of what Options.Extend built (package gate's MCP
// hub); nil without one.
func (rt *Runtime) Extension() any { return rt.ext.Value }

// Root is the workspace's directory, with symlinks resolved.
func (rt *Runtime) Root() string { return rt.ws.Dir }

// Workspace is the workspace calls are confined to.
func (rt *Runtime) Workspace() *engine.Workspace { return rt.ws }

// Engine is the runtime's engine. Hooks added to it must be added before the
// runtime's first call (the engine's hook lists are not guarded).
func (rt *Runtime) Engine() *engine.Engine { return rt.eng }

// Registry is the tools calls are routed to.
func (rt *Runtime) Registry() *engine.Registry { return rt.eng.Registry() }

// Intents are the intents in force.
func (rt *Runtime) Intents() hooks.Intents {
	if rt.intents == nil {
		return failedIntents{fmt.Errorf("%s is not intact", rt.orch)}
	}
	return rt.intents
}

// Stores are the workspace's .orchestration/ stores; nil while the directory
// is not intact (every call is then refused).
func (rt *Runtime) Stores() *orchestration.Stores { return rt.stores }

// IntentsProblem is why the last edit of active_intents.yaml was rejected
// (the previous intents stay in force), or nil.
func (rt *Runtime) IntentsProblem() error {
	if rt.stores == nil || rt.stores.Intents == nil {
		return nil
	}
	return rt.stores.Intents.Problem()
}

// IntentsProblemSeen is IntentsProblem as of the last look at
// active_intents.yaml (every call that consults the intents looks), without
// a look of its own: what the front doors report after each call.
func (rt *Runtime) IntentsProblemSeen() error {
	if rt.stores == nil || rt.stores.Intents == nil {
		return nil
	}
	return rt.stores.Intents.LastProblem()
}

// prepare fills in what the runtime owns in a call.
func (rt *Runtime) prepare(c *engine.Call) { c.WS = rt.ws }

// Dispatch runs a call through the pre-hooks, its tool and the post-hooks,
// after the calls of its session that came before it. It returns what
// engine.Engine.Dispatch returns.
func (rt *Runtime) Dispatch(ctx context.Context, c *engine.Call) (*engine.Result, error) {
	ctx, release, err := rt.Hold(ctx, c.Session)
	if err != nil {
		return nil, err
	}
	defer release()
	rt.prepare(c)
	return rt.eng.Dispatch(ctx, c)
}

// DispatchApproved is Dispatch with approve asked between the pre-hooks and
// the tool (engine.Engine.DispatchApproved), within the session's turn.
func (rt *Runtime) DispatchApproved(ctx context.Context, c *engine.Call, approve engine.Approve) (*engine.Result, error) {
	ctx, release, err := rt.Hold(ctx, c.Session)
	if err != nil {
		return nil, err
	}
	defer release()
	rt.prepare(c)
	return rt.eng.DispatchApproved(ctx, c, approve)
}

// Authorize runs the pre-hooks only, for a tool an external agent runs. It
// returns nil or a *engine.Denial.
func (rt *Runtime) Authorize(ctx context.Context, c *engine.Call) error {
	ctx, release, err := rt.Hold(ctx, c.Session)
	if err != nil {
		return err
	}
	defer release()
	rt.prepare(c)
	return rt.eng.Authorize(ctx, c)
}

// Check answers what Authorize would, recording nothing: it judges a change
// an external agent reports after making it.
func (rt *Runtime) Check(ctx context.Context, c *engine.Call) error {
	ctx, release, err := rt.Hold(ctx, c.Session)
	if err != nil {
		return err
	}
	defer release()
	rt.prepare(c)
	return rt.eng.Check(ctx, c)
}

// Observe runs the post-hooks for a call an external agent ran.
func (rt *Runtime) Observe(ctx context.Context, c *engine.Call, r *engine.Result) error {
	ctx, release, err := rt.Hold(ctx, c.Session)
	if err != nil {
		return err
	}
	defer release()
	rt.prepare(c)
	return rt.eng.Observe(ctx, c, r)
}
