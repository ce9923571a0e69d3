package gatecore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/catalog/spec"
)

// declared is the registry of a runtime opened without Options.Extend:
// every declared tool, with its name and group, so that every policy judges
// a call as in a full runtime. select_active_intent runs (a hook event
// selects intents); any other tool is not linked into this process and
// fails, naming the command that runs it.
func declared(d Deps) *engine.Registry {
	reg := engine.NewRegistry()
	for _, t := range spec.Tools() {
		tool := engine.Tool(notLinked(t.Name))
		if t.Name == hooks.SelectTool {
			tool = hooks.SelectActiveIntent(d.Intents, d.Stores.Sessions, d.Orch)
		}
		reg.Register(engine.Spec{Name: t.Name, Group: t.Group, Tool: tool})
	}
	return reg
}

func notLinked(name string) engine.ToolFunc {
	return func(context.Context, *engine.Call) (*engine.Result, error) {
		return nil, fmt.Errorf("%s is not available in this process (a hook process runs no tool); run it through `intentgate dispatch` or `intentgate mcp`", name)
	}
}

// mcpArgsUnreadable judges the MCP hub's tools in a runtime without the
// hub: their arguments cannot be resolved against a server's settings, so
// the scope policy refuses them (a hook event never names them: an
// agent's own MCP calls are mcp__<server>__<tool>).
func mcpArgsUnreadable(c *engine.Call) (json.RawMessage, string, bool) {
	switch c.Tool {
	case "use_mcp_tool", "access_mcp_resource":
		return json.RawMessage(`{`), "", true
	}
	return nil, "", false
}
