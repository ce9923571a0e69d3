// Package spec declares every tool intentgate offers by name, group and
// mode availability, without their implementations: what a governance
// policy needs to know of a tool. Package catalog joins each declaration
// with its constructor and schema; a hook process, which judges calls but
// runs no tool, builds its registry from these declarations alone and so
// links none of the tool implementations (browser, PDF, code index, MCP).
//
// Adding a tool is one entry here, one constructor in catalog and one schema
// file in catalog/schemas.
package spec

import (
	"slices"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
)

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
}

// table is every tool, in the order the model reads them: intent selection,
// reading, editing, commands, the browser, MCP, then the tools of the
// conversation itself. The groups follow Roo Code's TOOL_GROUPS
// (src/shared/tools.ts). Roo Code puts ask_followup_question,
// attempt_completion and update_todo_list in no group (every mode has them);
// here they join switch_mode and new_task under modes, the tools that act on
// the conversation rather than the workspace. select_active_intent changes no
// file, so it is a read tool.
var table = []Tool{
	{Name: hooks.SelectTool, Group: engine.GroupRead, Always: true, Own: true},
	{Name: "read_file", Group: engine.GroupRead},
	{Name: "list_files", Group: engine.GroupRead},
	{Name: "search_files", Group: engine.GroupRead},
	{Name: "list_code_definition_names", Group: engine.GroupRead},
	{Name: "codebase_search", Group: engine.GroupRead},
	{Name: "fetch_instructions", Group: engine.GroupRead},
	{Name: "write_to_file", Group: engine.GroupEdit},
	{Name: "apply_diff", Group: engine.GroupEdit},
	{Name: "insert_content", Group: engine.GroupEdit},
	{Name: "search_and_replace", Group: engine.GroupEdit},
	{Name: "execute_command", Group: engine.GroupCommand},
	{Name: "browser_action", Group: engine.GroupBrowser},
	// MCP servers' tools and resources (.roo/mcp.json): mcphub.UseToolName
	// and mcphub.AccessResourceName.
	{Name: "use_mcp_tool", Group: engine.GroupMCP},
	{Name: "access_mcp_resource", Group: engine.GroupMCP},
	{Name: "ask_followup_question", Group: engine.GroupModes, Always: true},
	{Name: "attempt_completion", Group: engine.GroupModes, Always: true},
	{Name: "switch_mode", Group: engine.GroupModes, Always: true},
	{Name: "new_task", Group: engine.GroupModes, Always: true},
	{Name: "update_todo_list", Group: engine.GroupModes, Always: true},
}

// Tools returns every declared tool, in the order the model reads them. The
// caller owns the slice.
func Tools() []Tool { return slices.Clone(table) }

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
