// Package gate is intentgate's governed runtime with every tool intentgate
// runs: one workspace under governance, built once and used by every front
// door (dispatch, the MCP server, the daemon, the agent loop). The runtime
// itself, its policies and how it judges what a command changed are
// package gatecore's; this package adds the tool implementations
// (internal/catalog) and the MCP hub of the workspace's servers
// (.roo/mcp.json). A hook process, which runs no tool, opens gatecore's
// runtime directly and links none of them.
package gate

import (
	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/catalog"
	"github.com/intentgate/intentgate/internal/gatecore"
	"github.com/intentgate/intentgate/tools"
)

// Runtime is one governed workspace (gatecore.Runtime). It is safe for
// concurrent use.
type Runtime = gatecore.Runtime

// Options tune a Runtime.
type Options struct {
	// Version is intentgate's version, written into ledger records.
	Version string
	// MCP are the callbacks of the MCP tools (approval of a call, its
	// execution status) for a front door that shows them to a person.
	MCP mcphub.ToolOptions
}

// Open opens the governed workspace at root, the directory holding
// .orchestration/ (Find finds it), with every tool of internal/catalog. It
// never creates .orchestration/: a root without one is an error that names
// `intentgate init`.
func Open(root string, opts Options) (*Runtime, error) {
	return gatecore.Open(root, gatecore.Options{Version: opts.Version, Extend: func(d gatecore.Deps) gatecore.Extension {
		hub := mcphub.New(mcphub.Options{Workspace: d.Workspace.Dir, GlobalConfig: mcphub.DefaultGlobalConfig(), Version: opts.Version})
		reg := catalog.Registry(catalog.Deps{
			Intents:  d.Intents,
			Sessions: d.Stores.Sessions,
			Orch:     d.Orch,
			Modes:    d.Stores.Modes,
			MCP:      hub,
			MCPTools: opts.MCP,
			Command: tools.CommandOptions{Timeout: gatecore.CommandTimeout, Settle: d.Command.Settle,
				Confine: d.Command.Confine, Picture: d.Command.Picture,
				Detached: d.Command.Detached, KeptRunning: d.Command.KeptRunning},
		})
		return gatecore.Extension{
			Registry: reg,
			ArgsOf:   mcphub.ArgsOf(hub),
			Pre: func(reg *engine.Registry) []engine.PreHook {
				return []engine.PreHook{mcphub.HashLock(reg, d.Workspace, d.Stores.Sessions, hub)}
			},
			Close: func() { hub.Close() },
			Value: hub,
		}
	}})
}

// MCP is the hub of the workspace's MCP servers (.roo/mcp.json) of a
// runtime Open opened; nil for another.
func MCP(rt *Runtime) *mcphub.Hub {
	hub, _ := rt.Extension().(*mcphub.Hub)
	return hub
}

// Find returns the governed workspace containing start (gatecore.Find).
func Find(start string) (root string, err error) { return gatecore.Find(start) }

// NoteKey is the key under which a command's result carries what other
// sessions changed meanwhile (gatecore.NoteKey).
const NoteKey = gatecore.NoteKey

// PendingEditKey is the session state key of an external agent's pending
// edit of rel (gatecore.PendingEditKey).
func PendingEditKey(rel string) string { return gatecore.PendingEditKey(rel) }

// Exec and its types run a command confined to an intent
// (gatecore.Exec).
type (
	ExecOptions   = gatecore.ExecOptions
	ExecError     = gatecore.ExecError
	Ownership     = gatecore.Ownership
	IntentVerdict = gatecore.IntentVerdict
)

// Exec runs args confined to the intent of a session (gatecore.Exec).
var Exec = gatecore.Exec

// Explain says which intents own path in the workspace at dir
// (gatecore.Explain).
func Explain(dir, path string) (*Ownership, error) { return gatecore.Explain(dir, path) }
