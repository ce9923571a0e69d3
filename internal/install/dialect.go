// Package install configures coding agents to be governed by intentgate,
// and checks that they are.
//
// Install writes an agent's hook configuration (its events go to
// `intentgate hook AGENT`), its registration of `intentgate mcp`, and the
// settings of the agent's own sandbox where it has one, into the agent's
// settings files. It is done for people: those files are protected paths no
// agent may change, so install does not go through the engine.
//
// Everything install adds is recognizable as intentgate's (hook commands
// "intentgate hook <agent>", an MCP server named intentgate whose command is
// intentgate, marked TOML blocks, Cline scripts carrying a marker line), which
// is how a second install changes nothing and how uninstall removes exactly
// what install added and nothing of the person's own; a state file beside the
// settings lets uninstall give back every byte.
//
// Doctor checks an installed workspace end to end: the hook command is found,
// answers a synthetic pre-tool event with a refusal in the agent's format, and
// the agent's own settings that decide whether the hooks run are in force.
//
// What differs between agents is in one table, dialects: where the hooks
// live, how install writes them, the synthetic event doctor sends, and what
// else doctor checks.
package install

// Agents are the agents install knows, in the order doctor reports them.
var Agents = []string{"claude-code", "codex", "gemini", "cursor", "cline"}

// dialect is what install and doctor know of one agent.
type dialect struct {
	// hookFile holds the hook commands, relative to the workspace.
	hookFile string
	// plan adds to p what install (or uninstall) changes for the agent
	// under root (the workspace, or the home directory with --global).
	plan func(p *installPlan, o *Options, root string, remove bool) error
	// sandboxNote says how the agent's shell commands are confined and what
	// install cannot guarantee.
	sandboxNote string
	// probe is a synthetic pre-tool event writing path (absolute), in the
	// agent's own format.
	probe func(ws, path string) map[string]any
	// setup says what else the agent needs to run every hook in ws, with
	// its own settings as install wrote them, and is missing; home is the
	// user's home directory.
	setup func(ws, home string) []string
}

var dialects = map[string]dialect{
	"claude-code": {
		hookFile: ".claude/settings.json",
		plan:     planClaudeCode,
		setup:    claudeSettings,
		probe: func(ws, path string) map[string]any {
			return map[string]any{"session_id": doctorSession, "cwd": ws, "hook_event_name": "PreToolUse",
				"tool_name": "Write", "tool_input": map[string]any{"file_path": path, "content": "x"}, "tool_use_id": "doctor"}
		},
	},
	"codex": {
		hookFile:    ".codex/hooks.json",
		plan:        planCodex,
		sandboxNote: codexSandboxNote,
		probe: func(ws, path string) map[string]any {
			return map[string]any{"session_id": doctorSession, "cwd": ws, "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
				"tool_input": map[string]any{"command": "*** Begin Patch\n*** Add File: " + relTo(ws, path) + "\n+x\n*** End Patch"}, "tool_use_id": "doctor"}
		},
		setup: codexSettings,
	},
	"gemini": {
		hookFile: ".gemini/settings.json",
		plan:     planGemini,
		probe: func(ws, path string) map[string]any {
			return map[string]any{"session_id": doctorSession, "cwd": ws, "hook_event_name": "BeforeTool",
				"tool_name": "write_file", "tool_input": map[string]any{"file_path": path, "content": "x"}}
		},
		setup: geminiSettings,
	},
	"cursor": {
		hookFile:    ".cursor/hooks.json",
		plan:        planCursor,
		sandboxNote: cursorSandboxNote,
		probe: func(ws, path string) map[string]any {
			return map[string]any{"hook_event_name": "preToolUse", "conversation_id": doctorSession, "workspace_roots": []string{ws},
				"tool_name": "Write", "tool_input": map[string]any{"file_path": path, "content": "x"}}
		},
	},
	"cline": {
		hookFile:    ".clinerules/hooks/PreToolUse",
		plan:        planCline,
		sandboxNote: clineSandboxNote,
		setup:       clineSettings,
		probe: func(ws, path string) map[string]any {
			return map[string]any{"hookName": "tool_call", "taskId": doctorSession, "workspaceRoots": []string{ws},
				"tool_call": map[string]any{"id": "doctor", "name": "editor", "input": map[string]any{"path": path, "new_text": "x"}}}
		},
	},
}
