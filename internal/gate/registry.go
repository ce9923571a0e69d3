package gate

import (
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/catalog"
	"github.com/intentgate/intentgate/tools"
)

// commandTimeout bounds execute_command.
const commandTimeout = 2 * time.Minute

// registry is every tool an agent can call, as internal/catalog declares
// them, built over this workspace's stores.
func (rt *Runtime) registry() *engine.Registry {
	st := rt.stores
	return catalog.Registry(catalog.Deps{
		Intents:  rt.intents,
		Sessions: st.Sessions,
		Orch:     rt.orch,
		Modes:    st.Modes,
		MCP:      rt.mcp,
		MCPTools: rt.mcpOpts,
		Command: tools.CommandOptions{Timeout: commandTimeout, Settle: rt.settle, Confine: rt.confineCommand, Picture: rt.Picture,
			Detached: rt.observeKeptRunning, KeptRunning: rt.keptRunning},
	})
}
