// Package catalog declares every tool intentgate offers, once: its name, its
// group (which decides whether its calls change the workspace), whether every
// mode has it, the JSON Schema the model reads, and the constructor of its
// implementation. The views of the tools are derived from this table and
// nothing else: the engine's registry (Registry, used by internal/gate), the
// tool definitions and per-mode lists of prompts, and the always-available
// set the mode policy honours (Always), and the agent's auto-approval groups
// and tool usage report (agent).
//
// Adding a tool is one declaration in package spec, one constructor here and
// one schema file in schemas/.
package catalog

import (
	"embed"
	"slices"
	"sync"

	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/intentgate/intentgate/internal/catalog/spec"
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

// Tool is the declaration of one tool (package spec) with its
// implementation's constructor.
type Tool struct {
	spec.Tool
	// New builds the tool's implementation.
	New func(Deps) engine.Tool
}

// Mutating reports whether calls of the tool change the workspace, by its
// group.
func (t Tool) Mutating() bool { return engine.Spec{Name: t.Name, Group: t.Group}.Mutating() }

// Schema returns the tool's JSON Schema document as the schema file holds it.
func (t Tool) Schema() ([]byte, error) { return schemaFiles.ReadFile("schemas/" + t.Name + ".json") }

// constructors build each declared tool's implementation.
var constructors = map[string]func(Deps) engine.Tool{
	hooks.SelectTool:             func(d Deps) engine.Tool { return hooks.SelectActiveIntent(d.Intents, d.Sessions, d.Orch) },
	"read_file":                  func(Deps) engine.Tool { return tools.ReadFile() },
	"list_files":                 func(Deps) engine.Tool { return tools.ListFiles(tools.ListOptions{}) },
	"search_files":               func(Deps) engine.Tool { return tools.SearchFiles() },
	"list_code_definition_names": func(Deps) engine.Tool { return tools.ListCodeDefinitionNames() },
	"codebase_search":            func(Deps) engine.Tool { return tools.CodebaseSearch(tools.CodebaseSearchOptions{}) },
	"fetch_instructions":         func(Deps) engine.Tool { return tools.FetchInstructions() },
	"write_to_file":              func(Deps) engine.Tool { return tools.WriteFile() },
	"apply_diff":                 func(Deps) engine.Tool { return tools.ApplyDiff() },
	"insert_content":             func(Deps) engine.Tool { return tools.InsertContent() },
	"search_and_replace":         func(Deps) engine.Tool { return tools.SearchAndReplace() },
	"execute_command":            func(d Deps) engine.Tool { return tools.ExecuteCommand(d.Command) },
	"browser_action":             func(Deps) engine.Tool { return tools.BrowserAction(tools.BrowserOptions{}) },
	// Nothing connects until a call names a server.
	mcphub.UseToolName:        func(d Deps) engine.Tool { return mcphub.UseTool(d.MCP, d.MCPTools) },
	mcphub.AccessResourceName: func(d Deps) engine.Tool { return mcphub.AccessResource(d.MCP, d.MCPTools) },
	"ask_followup_question":   func(Deps) engine.Tool { return tools.AskFollowupQuestion() },
	"attempt_completion":      func(Deps) engine.Tool { return tools.AttemptCompletion() },
	"switch_mode":             func(d Deps) engine.Tool { return tools.SwitchMode(d.Modes) },
	"new_task":                func(d Deps) engine.Tool { return tools.NewTask(d.Modes) },
	"update_todo_list":        func(Deps) engine.Tool { return tools.UpdateTodoList() },
}

// table joins the declarations with their constructors; a declaration
// without one has a nil New (TestSchemaFilesMatchTable fails on it).
var table = sync.OnceValue(func() []Tool {
	var out []Tool
	for _, t := range spec.Tools() {
		out = append(out, Tool{Tool: t, New: constructors[t.Name]})
	}
	return out
})

// Tools returns every declared tool, in the order the model reads them. The
// caller owns the slice.
func Tools() []Tool { return slices.Clone(table()) }

// Lookup returns the declaration of the named tool.
func Lookup(name string) (Tool, bool) {
	for _, t := range table() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Always returns the names of the tools every mode has, in table order.
func Always() []string { return spec.Always() }

// Registry returns a registry of every declared tool, built with d.
func Registry(d Deps) *engine.Registry {
	reg := engine.NewRegistry()
	for _, t := range table() {
		reg.Register(engine.Spec{Name: t.Name, Group: t.Group, Tool: t.New(d)})
	}
	return reg
}
