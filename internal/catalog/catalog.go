// Package catalog declares every tool intentgate offers, once: its name, its
// group (which decides whether its calls change the workspace), whether every
// mode has it, the JSON Schema the model reads, and the constructor of its
// implementation. The views of the tools are derived from this table and
// nothing else: the engine's registry (Registry, used by internal/gate), the
// tool definitions and per-mode lists of prompts, and the always-available
// set the mode policy honours (Always), and the agent's auto-approval groups
// and tool usage report (agent).
//
// Adding a tool is one entry in the table and one schema file in schemas/.
package catalog

import (
	"embed"
	"slices"

	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/tools"
)

// The schemas live in schemas/<name>.json, one JSON Schema (draft 2020-12)
// per tool: "title" is the tool's name, "description" what the model reads
// about it, and the rest the schema of its arguments. They are data rather
// than Go so that other agents can read them as they are.
//
//go:embed schemas/*.json
var schemaFiles embed.FS

// Deps is what the tools' constructors need of the governed workspace that
// registers them.
type Deps struct {
	Intents  hooks.Intents
	Sessions *orchestration.SessionStore
	// Orch is the workspace's .orchestration directory.
	Orch  string
	Modes tools.Modes
	// MCP connects to the servers of .roo/mcp.json; nil registers the MCP
	// tools over no hub.
	MCP *mcphub.Hub
	// MCPTools are use_mcp_tool's and access_mcp_resource's callbacks
	// (approval, execution status); zero asks nothing and reports nothing.
	MCPTools mcphub.ToolOptions
	Command  tools.CommandOptions
}

// Tool is the declaration of one tool.
type Tool struct {
	Name string
	// Group decides the modes that may call the tool and whether its calls
	// change the workspace: edit and command tools do (engine.Spec.Mutating);
	// a tool whose implementation is an engine.Classifier decides per call.
	Group engine.Group
	// Always: every mode has the tool whatever its groups (Roo Code's
	// ALWAYS_AVAILABLE_TOOLS, and select_active_intent, since no mode may
	// keep a model from following the intent protocol).
	Always bool
	// Own: the tool is intentgate's own, not one of Roo Code's
	// (@roo-code/types toolNames); its usage is reported apart from theirs.
	Own bool
	// New builds the tool's implementation.
	New func(Deps) engine.Tool
}

// Mutating reports whether calls of the tool change the workspace, by its
// group.
func (t Tool) Mutating() bool { return engine.Spec{Name: t.Name, Group: t.Group}.Mutating() }

// Schema returns the tool's JSON Schema document as the schema file holds it.
func (t Tool) Schema() ([]byte, error) { return schemaFiles.ReadFile("schemas/" + t.Name + ".json") }

// table is every tool, in the order the model reads them: intent selection,
// reading, editing, commands, the browser, MCP, then the tools of the
// conversation itself. The groups follow Roo Code's TOOL_GROUPS
// (src/shared/tools.ts). Roo Code puts ask_followup_question,
// attempt_completion and update_todo_list in no group (every mode has them);
// here they join switch_mode and new_task under modes, the tools that act on
// the conversation rather than the workspace. select_active_intent changes no
// file, so it is a read tool.
var table = []Tool{
	{Name: hooks.SelectTool, Group: engine.GroupRead, Always: true, Own: true,
		New: func(d Deps) engine.Tool { return hooks.SelectActiveIntent(d.Intents, d.Sessions, d.Orch) }},
	{Name: "read_file", Group: engine.GroupRead,
		New: func(Deps) engine.Tool { return tools.ReadFile() }},
	{Name: "list_files", Group: engine.GroupRead,
		New: func(Deps) engine.Tool { return tools.ListFiles(tools.ListOptions{}) }},
	{Name: "search_files", Group: engine.GroupRead,
		New: func(Deps) engine.Tool { return tools.SearchFiles() }},
	{Name: "list_code_definition_names", Group: engine.GroupRead,
		New: func(Deps) engine.Tool { return tools.ListCodeDefinitionNames() }},
	{Name: "codebase_search", Group: engine.GroupRead,
		New: func(Deps) engine.Tool { return tools.CodebaseSearch(tools.CodebaseSearchOptions{}) }},
	{Name: "fetch_instructions", Group: engine.GroupRead,
		New: func(Deps) engine.Tool { return tools.FetchInstructions() }},
	{Name: "write_to_file", Group: engine.GroupEdit,
		New: func(Deps) engine.Tool { return tools.WriteFile() }},
	{Name: "apply_diff", Group: engine.GroupEdit,
		New: func(Deps) engine.Tool { return tools.ApplyDiff() }},
	{Name: "insert_content", Group: engine.GroupEdit,
		New: func(Deps) engine.Tool { return tools.InsertContent() }},
	{Name: "search_and_replace", Group: engine.GroupEdit,
		New: func(Deps) engine.Tool { return tools.SearchAndReplace() }},
	{Name: "execute_command", Group: engine.GroupCommand,
		New: func(d Deps) engine.Tool { return tools.ExecuteCommand(d.Command) }},
	{Name: "browser_action", Group: engine.GroupBrowser,
		New: func(Deps) engine.Tool { return tools.BrowserAction(tools.BrowserOptions{}) }},
	// MCP servers' tools and resources (.roo/mcp.json); nothing connects
	// until a call names a server.
	{Name: mcphub.UseToolName, Group: engine.GroupMCP,
		New: func(d Deps) engine.Tool { return mcphub.UseTool(d.MCP, d.MCPTools) }},
	{Name: mcphub.AccessResourceName, Group: engine.GroupMCP,
		New: func(d Deps) engine.Tool { return mcphub.AccessResource(d.MCP, d.MCPTools) }},
	{Name: "ask_followup_question", Group: engine.GroupModes, Always: true,
		New: func(Deps) engine.Tool { return tools.AskFollowupQuestion() }},
	{Name: "attempt_completion", Group: engine.GroupModes, Always: true,
		New: func(Deps) engine.Tool { return tools.AttemptCompletion() }},
	{Name: "switch_mode", Group: engine.GroupModes, Always: true,
		New: func(d Deps) engine.Tool { return tools.SwitchMode(d.Modes) }},
	{Name: "new_task", Group: engine.GroupModes, Always: true,
		New: func(d Deps) engine.Tool { return tools.NewTask(d.Modes) }},
	{Name: "update_todo_list", Group: engine.GroupModes, Always: true,
		New: func(Deps) engine.Tool { return tools.UpdateTodoList() }},
}

// Tools returns every declared tool, in the order the model reads them. The
// caller owns the slice.
func Tools() []Tool { return slices.Clone(table) }

// Lookup returns the declaration of the named tool.
func Lookup(name string) (Tool, bool) {
	for _, t := range table {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Always returns the names of the tools every mode has, in table order.
func Always() []string {
	var out []string
	for _, t := range table {
		if t.Always {
			out = append(out, t.Name)
		}
	}
	return out
}

// Registry returns a registry of every declared tool, built with d.
func Registry(d Deps) *engine.Registry {
	reg := engine.NewRegistry()
	for _, t := range table {
		reg.Register(engine.Spec{Name: t.Name, Group: t.Group, Tool: t.New(d)})
	}
	return reg
}
