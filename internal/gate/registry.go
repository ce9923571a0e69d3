package gate

import (
	"time"

	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/tools"
)

// commandTimeout bounds execute_command.
const commandTimeout = 2 * time.Minute

// registry is every tool an agent can call, with its group; the gatekeeper
// and the modes decide by group.
func (rt *Runtime) registry() *engine.Registry {
	st := rt.stores
	reg := engine.NewRegistry()
	reg.Register(engine.Spec{Name: hooks.SelectTool, Group: engine.GroupRead,
		Tool: hooks.SelectActiveIntent(rt.intents, st.Sessions, rt.orch)})
	reg.Register(engine.Spec{Name: "read_file", Group: engine.GroupRead, Tool: tools.ReadFile()})
	reg.Register(engine.Spec{Name: "list_files", Group: engine.GroupRead, Tool: tools.ListFiles(tools.ListOptions{})})
	reg.Register(engine.Spec{Name: "search_files", Group: engine.GroupRead, Tool: tools.SearchFiles()})
	reg.Register(engine.Spec{Name: "list_code_definition_names", Group: engine.GroupRead, Tool: tools.ListCodeDefinitionNames()})
	reg.Register(engine.Spec{Name: "fetch_instructions", Group: engine.GroupRead, Tool: tools.FetchInstructions()})
	reg.Register(engine.Spec{Name: "codebase_search", Group: engine.GroupRead, Tool: tools.CodebaseSearch(tools.CodebaseSearchOptions{})})
	reg.Register(engine.Spec{Name: "write_to_file", Group: engine.GroupEdit, Tool: tools.WriteFile()})
	reg.Register(engine.Spec{Name: "apply_diff", Group: engine.GroupEdit, Tool: tools.ApplyDiff()})
	reg.Register(engine.Spec{Name: "insert_content", Group: engine.GroupEdit, Tool: tools.InsertContent()})
	reg.Register(engine.Spec{Name: "search_and_replace", Group: engine.GroupEdit, Tool: tools.SearchAndReplace()})
	reg.Register(engine.Spec{Name: "execute_command", Group: engine.GroupCommand,
		Tool: tools.ExecuteCommand(tools.CommandOptions{Timeout: commandTimeout, Settle: rt.settle, Confine: rt.confineCommand, Picture: rt.Picture})})
	reg.Register(engine.Spec{Name: "browser_action", Group: engine.GroupBrowser, Tool: tools.BrowserAction(tools.BrowserOptions{})})
	// MCP servers' tools and resources (.roo/mcp.json); nothing connects
	// until a call names a server.
	reg.Register(engine.Spec{Name: mcphub.UseToolName, Group: engine.GroupMCP, Tool: mcphub.UseTool(rt.mcp, mcphub.ToolOptions{})})
	reg.Register(engine.Spec{Name: mcphub.AccessResourceName, Group: engine.GroupMCP, Tool: mcphub.AccessResource(rt.mcp, mcphub.ToolOptions{})})
	// Tools every mode has (Roo Code's ALWAYS_AVAILABLE_TOOLS): in the modes
	// group, so that they need no intent.
	reg.Register(engine.Spec{Name: "ask_followup_question", Group: engine.GroupModes, Tool: tools.AskFollowupQuestion()})
	reg.Register(engine.Spec{Name: "attempt_completion", Group: engine.GroupModes, Tool: tools.AttemptCompletion()})
	reg.Register(engine.Spec{Name: "switch_mode", Group: engine.GroupModes, Tool: tools.SwitchMode(st.Modes)})
	reg.Register(engine.Spec{Name: "new_task", Group: engine.GroupModes, Tool: tools.NewTask(st.Modes)})
	reg.Register(engine.Spec{Name: "update_todo_list", Group: engine.GroupModes, Tool: tools.UpdateTodoList()})
	return reg
}
