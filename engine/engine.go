// Package engine is intentgate's HookEngine: every tool call passes its
// pre-hooks, runs, and passes its post-hooks.
//
// Pre and post are separate phases because an external agent runs the two
// halves of a call in different processes and executes the tool itself:
// Dispatch runs all three steps, Authorize only the pre-hooks, Observe only
// the post-hooks.
package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// PreHook decides whether a call may run. It returns nil to allow, a *Denial
// to refuse, and any other error also refuses (fail closed, HOOK_ERROR).
type PreHook interface {
	Pre(ctx context.Context, c *Call) error
}

// PostHook records what a call did. Its error never undoes the call; the
// engine reports it.
type PostHook interface {
	Post(ctx context.Context, c *Call, r *Result) error
}

// Finisher completes a call after its last hook: it writes, once, what the
// hooks of the call left to be written at its end (the session's derived
// state). It runs after the post-hooks of a call, and after a refusal has
// been told to the observers.
type Finisher interface {
	Finish(ctx context.Context, c *Call) error
}

// DenialObserver is told of every refusal, so refusals are evidence too.
type DenialObserver interface {
	Denied(ctx context.Context, c *Call, d *Denial) error
}

// PreFunc adapts a function to PreHook.
type PreFunc func(ctx context.Context, c *Call) error

func (f PreFunc) Pre(ctx context.Context, c *Call) error { return f(ctx, c) }

// PostFunc adapts a function to PostHook.
type PostFunc func(ctx context.Context, c *Call, r *Result) error

func (f PostFunc) Post(ctx context.Context, c *Call, r *Result) error { return f(ctx, c, r) }

// Tool executes a call. Returning a *Denial refuses it (a precondition that
// failed under the file lock); any other error is a tool failure.
type Tool interface {
	Run(ctx context.Context, c *Call) (*Result, error)
}

// ToolFunc adapts a function to Tool.
type ToolFunc func(ctx context.Context, c *Call) (*Result, error)

func (f ToolFunc) Run(ctx context.Context, c *Call) (*Result, error) { return f(ctx, c) }

// Group is a tool's capability class; edit and command tools mutate.
type Group string

const (
	GroupRead    Group = "read"
	GroupEdit    Group = "edit"
	GroupCommand Group = "command"
	GroupMCP     Group = "mcp"
	GroupBrowser Group = "browser"
	GroupModes   Group = "modes"
)

// Spec describes a registered tool.
type Spec struct {
	Name  string
	Group Group
	Tool  Tool // nil for tools only external agents execute
}

// Mutating reports whether calls of this tool can change the workspace.
func (s Spec) Mutating() bool { return s.Group == GroupEdit || s.Group == GroupCommand }

// Classifier is implemented by a tool whose calls differ in whether they can
// change the workspace (an MCP server's tool annotated read-only or not): the
// decision is then made per call rather than by the tool's group.
type Classifier interface {
	Mutates(c *Call) bool
}

// MutatingCall reports whether c can change the workspace: per call for a
// tool that is a Classifier, by its group otherwise; a tool the registry
// does not know counts as mutating.
func (r *Registry) MutatingCall(c *Call) bool {
	s, ok := r.specs[c.Tool]
	if !ok {
		return true
	}
	if cl, ok := s.Tool.(Classifier); ok {
		return cl.Mutates(c)
	}
	return s.Mutating()
}

// Registry routes tool names to tools, the way a mux routes paths.
type Registry struct {
	specs map[string]Spec
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{specs: map[string]Spec{}} }

// Register adds a tool; registering a name twice panics, as a wiring bug.
func (r *Registry) Register(s Spec) {
	if _, dup := r.specs[s.Name]; dup {
		panic("engine: tool registered twice: " + s.Name)
	}
	r.specs[s.Name] = s
}

// Lookup returns the tool registered under name.
func (r *Registry) Lookup(name string) (Spec, bool) {
	s, ok := r.specs[name]
	return s, ok
}

// Names returns the registered tool names, sorted.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.specs))
	for n := range r.specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Engine runs calls through hooks.
type Engine struct {
	reg      *Registry
	pre      []PreHook
	post     []PostHook
	observer []DenialObserver
	finish   []Finisher
}

// New returns an engine over reg with no hooks.
func New(reg *Registry) *Engine { return &Engine{reg: reg} }

// Registry returns the engine's registry.
func (e *Engine) Registry() *Registry { return e.reg }

// Use appends pre-hooks, run in order; the first refusal stops the chain.
func (e *Engine) Use(h ...PreHook) { e.pre = append(e.pre, h...) }

// After appends post-hooks, run in order; every post-hook runs.
func (e *Engine) After(h ...PostHook) { e.post = append(e.post, h...) }

// OnDenial appends observers of refusals.
func (e *Engine) OnDenial(o ...DenialObserver) { e.observer = append(e.observer, o...) }

// Finally appends finishers, run in order at the end of every call.
func (e *Engine) Finally(f ...Finisher) { e.finish = append(e.finish, f...) }

// finished runs the finishers, collecting their errors.
func (e *Engine) finished(ctx context.Context, c *Call) []error {
	var errs []error
	for _, f := range e.finish {
		if err := safeFinish(ctx, f, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func safeFinish(ctx context.Context, f Finisher, c *Call) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("finisher panicked: %v", p)
		}
	}()
	return f.Finish(ctx, c)
}

// PostError reports post-hook failures after a call that did run. The call's
// effect stands; what failed to be recorded is named here.
type PostError struct {
	Errs []error
}

func (e *PostError) Error() string {
	return fmt.Sprintf("post-hook failed: %v", errors.Join(e.Errs...))
}

func (e *PostError) Unwrap() []error { return e.Errs }

// resolve fills in the per-call facts every hook reads: the tool's spec.
func (e *Engine) resolve(c *Call) {
	if c.spec == nil || c.spec.Name != c.Tool && c.spec.Name != "" {
		spec, _ := e.reg.Lookup(c.Tool)
		c.spec = &spec
	}
}

// Authorize runs the pre-hooks only. It returns nil or a *Denial.
func (e *Engine) Authorize(ctx context.Context, c *Call) error { return e.authorize(ctx, c, true) }

// Check answers what Authorize would, without telling the denial observers:
// nothing is recorded. It judges a change reported after it was made.
func (e *Engine) Check(ctx context.Context, c *Call) error { return e.authorize(ctx, c, false) }

func (e *Engine) authorize(ctx context.Context, c *Call, record bool) error {
	e.resolve(c)
	for _, h := range e.pre {
		err := safePre(ctx, h, c)
		if err == nil {
			continue
		}
		d, ok := AsDenial(err)
		if !ok {
			d = &Denial{Code: HookError, Tool: c.Tool,
				Message: "a policy check failed, so the call is refused: " + err.Error(),
				Hint:    "this is not about your request; report it to the workspace owner and retry later"}
		}
		if d.Tool == "" {
			d.Tool = c.Tool
		}
		if d.Intent == "" {
			d.Intent = c.Intent
		}
		if record {
			e.deny(ctx, c, d)
		}
		return d
	}
	return nil
}

// deny tells the observers of a refusal. A refusal stands whether or not it
// could be recorded; what failed is kept on the denial for the front door to
// report, never dropped.
func (e *Engine) deny(ctx context.Context, c *Call, d *Denial) {
	var errs []error
	for _, o := range e.observer {
		if err := o.Denied(ctx, c, d); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, e.finished(ctx, c)...)
	d.NotRecorded = errors.Join(errs...)
}

// safePre turns a panicking hook into an error: a bug must deny, not crash
// the process that holds other sessions' calls.
func safePre(ctx context.Context, h PreHook, c *Call) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("hook panicked: %v", p)
		}
	}()
	return h.Pre(ctx, c)
}

// Observe runs the post-hooks for a call whose tool ran elsewhere.
func (e *Engine) Observe(ctx context.Context, c *Call, r *Result) error {
	e.resolve(c)
	var errs []error
	for _, h := range e.post {
		if err := safePost(ctx, h, c, r); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, e.finished(ctx, c)...)
	if len(errs) > 0 {
		return &PostError{Errs: errs}
	}
	return nil
}

func safePost(ctx context.Context, h PostHook, c *Call, r *Result) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("post-hook panicked: %v", p)
		}
	}()
	return h.Post(ctx, c, r)
}

// Dispatch authorizes a call, runs its tool, and observes the result. A
// refusal comes back as a *Denial error with a nil Result. A tool failure
// comes back as a Result-less error. A post-hook failure comes back as a
// *PostError together with the Result, because the call did happen.
func (e *Engine) Dispatch(ctx context.Context, c *Call) (*Result, error) {
	return e.DispatchApproved(ctx, c, nil)
}

// Approve is asked between a call's pre-hooks and its tool: a person
// approving the call. Its error stops the call and is returned as is.
type Approve func(ctx context.Context, c *Call) error

// DispatchApproved is Dispatch with approve (when not nil) asked after the
// pre-hooks allowed the call and before its tool runs, so the pre-hooks run
// once and a refused call is never put to the person.
func (e *Engine) DispatchApproved(ctx context.Context, c *Call, approve Approve) (res *Result, err error) {
	e.resolve(c)
	spec, known := c.Spec()
	c.runsNow = approve == nil && known && spec.Tool != nil
	err = e.Authorize(ctx, c)
	c.runsNow = false
	if err != nil {
		return nil, err
	}
	if !known || spec.Tool == nil {
		d := &Denial{Code: InvalidArgument, Tool: c.Tool,
			Message: fmt.Sprintf("unknown tool %q", c.Tool),
			Hint:    "use one of: " + joinNames(e.reg.Names())}
		e.deny(ctx, c, d)
		return nil, d
	}
	if approve != nil {
		if err := approve(ctx, c); err != nil {
			return nil, err
		}
	}
	c.deferDirSyncs()
	r, err := spec.Tool.Run(ctx, c)
	// Whatever the trace did not sync along with the ledger is synced
	// before the call is answered.
	defer func() {
		if serr := c.SyncPending(); serr != nil {
			var pe *PostError
			switch {
			case err == nil:
				err = &PostError{Errs: []error{serr}}
			case errors.As(err, &pe):
				pe.Errs = append(pe.Errs, serr)
			default:
				err = errors.Join(err, serr)
			}
		}
	}()
	if err != nil {
		if d, ok := AsDenial(err); ok {
			if d.Tool == "" {
				d.Tool = c.Tool
			}
			if d.Intent == "" {
				d.Intent = c.Intent
			}
			e.deny(ctx, c, d)
		} else if errs := e.finished(ctx, c); len(errs) > 0 {
			err = fmt.Errorf("%w (and it could not be recorded: %v)", err, errors.Join(errs...))
		}
		return nil, err
	}
	if r == nil {
		r = &Result{}
	}
	return r, e.Observe(ctx, c, r)
}

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += n
	}
	return s
}
