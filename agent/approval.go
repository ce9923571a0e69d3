package agent

import (
	"fmt"
	"strings"
)

// Auto-approval groups: the tool groups, plus subtasks (new_task) and
// followup (answer a follow-up question with its first suggestion).
const (
	GroupRead     = "read"
	GroupEdit     = "edit"
	GroupCommand  = "command"
	GroupMCP      = "mcp"
	GroupBrowser  = "browser"
	GroupModes    = "modes"
	GroupSubtasks = "subtasks"
	GroupFollowup = "followup"
)

// AllGroups lists every auto-approval group.
var AllGroups = []string{GroupRead, GroupEdit, GroupCommand, GroupMCP, GroupBrowser, GroupModes, GroupSubtasks, GroupFollowup}

// AutoApprove decides which asks are answered without a person. It is a
// value: the permission policy lives here and nowhere in the loop.
type AutoApprove struct {
	groups map[string]bool
	// MaxRequests, when above 0, is how many API requests may run before
	// auto_approval_max_req_reached asks to go on.
	MaxRequests int
}

// ParseAutoApprove reads a comma-separated list of groups; "all" is every
// group (what -y means).
func ParseAutoApprove(list string) (AutoApprove, error) {
	a := AutoApprove{groups: map[string]bool{}}
	for _, g := range strings.Split(list, ",") {
		g = strings.TrimSpace(g)
		switch {
		case g == "":
		case g == "all":
			for _, x := range AllGroups {
				a.groups[x] = true
			}
		case contains(AllGroups, g):
			a.groups[g] = true
		default:
			return a, fmt.Errorf("unknown auto-approval group %q: use %s or all", g, strings.Join(AllGroups, ", "))
		}
	}
	return a, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Allows reports whether group is auto-approved.
func (a AutoApprove) Allows(group string) bool { return a.groups[group] }

// approvalGroup is the auto-approval group of a tool.
func approvalGroup(tool string) string {
	switch tool {
	case "read_file", "list_files", "search_files", "list_code_definition_names", "select_active_intent", "codebase_search", "fetch_instructions":
		return GroupRead
	case "write_to_file", "apply_diff", "insert_content", "search_and_replace":
		return GroupEdit
	case "execute_command":
		return GroupCommand
	case "use_mcp_tool", "access_mcp_resource":
		return GroupMCP
	case "browser_action":
		return GroupBrowser
	case "switch_mode", "update_todo_list":
		return GroupModes
	case "new_task":
		return GroupSubtasks
	}
	return ""
}
