package main

import (
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/tools"
)

// newRegistry is every tool an agent can call, with its group; the
// gatekeeper and the modes decide by group.
func newRegistry(g *governed) *engine.Registry {
	reg := engine.NewRegistry()
	reg.Register(engine.Spec{Name: hooks.SelectTool, Group: engine.GroupRead,
		Tool: hooks.SelectActiveIntent(g.intents, g.sessions, g.orch)})
	reg.Register(engine.Spec{Name: "read_file", Group: engine.GroupRead, Tool: tools.ReadFile()})
	reg.Register(engine.Spec{Name: "write_to_file", Group: engine.GroupEdit, Tool: tools.WriteFile()})
	reg.Register(engine.Spec{Name: "execute_command", Group: engine.GroupCommand,
		Tool: tools.ExecuteCommand(tools.CommandOptions{Timeout: 2 * time.Minute})})
	return reg
}
