package hooks

import (
	"context"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// Limits on what a session's usage table keeps, since tool names come from
// agents: a name that is too long, or one beyond the number of distinct
// names kept, is counted under usageOther.
const (
	usageMaxName  = 128
	usageMaxTools = 256
	usageOther    = "(other)"
)

// Usage counts, per session and tool, the calls made and how many of them
// failed, as Roo Code's toolUsage does: a call is counted once, when it ends
// in a refusal (Denied), a failure of the tool itself (the tools wrapped by
// Tools) or a result (Post). Counting is bookkeeping: when the session
// cannot be updated, the call's outcome stands; Post reports the error.
type Usage struct {
	sessions *orchestration.SessionStore
}

// NewUsage returns the usage counter.
func NewUsage(sessions *orchestration.SessionStore) *Usage { return &Usage{sessions: sessions} }

func (u *Usage) count(c *engine.Call, failed bool) error {
	if c.Session == "" || u.sessions == nil {
		return nil
	}
	LaterSession(c, u.sessions, func(s *orchestration.Session) {
		name := c.Tool
		if _, known := s.Usage[name]; !known && (len(name) > usageMaxName || len(s.Usage) >= usageMaxTools) {
			name = usageOther
		}
		s.CountUse(name, failed)
	})
	return nil
}

// KeptRunningKey marks, in a result's Data, the judgement of a command
// that kept running after its call returned: the call was counted then.
const KeptRunningKey = "kept_running"

// Post counts a call that ran.
func (u *Usage) Post(ctx context.Context, c *engine.Call, r *engine.Result) error {
	if r != nil && r.Data[KeptRunningKey] == true {
		return nil
	}
	return u.count(c, false)
}

// Denied counts a refused call as failed.
func (u *Usage) Denied(ctx context.Context, c *engine.Call, d *engine.Denial) error {
	return u.count(c, true)
}

// Tools returns a registry with the tools of reg, each counting its own
// failures (its refusals reach Denied).
func (u *Usage) Tools(reg *engine.Registry) *engine.Registry {
	out := engine.NewRegistry()
	for _, name := range reg.Names() {
		spec, _ := reg.Lookup(name)
		if t := spec.Tool; t != nil {
			counted := engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
				r, err := t.Run(ctx, c)
				if err != nil {
					if _, denied := engine.AsDenial(err); !denied {
						// The tool's own error is what the caller must see.
						_ = u.count(c, true)
					}
				}
				return r, err
			})
			spec.Tool = counted
			// A tool that decides per call whether it changes the
			// workspace keeps deciding: without this, an MCP tool call
			// would count as read-only by its group and pass the
			// gatekeeper without an intent.
			if cl, ok := t.(engine.Classifier); ok {
				spec.Tool = classified{counted, cl}
			}
		}
		out.Register(spec)
	}
	return out
}

// classified is a counted tool that still classifies its calls.
type classified struct {
	engine.ToolFunc
	engine.Classifier
}
