package agent

import (
	"fmt"
	"strings"

	"github.com/intentgate/intentgate/internal/catalog"
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

// approvalGroup is the auto-approval group of a tool: its group in the tool
// catalog, except new_task, which has a group of its own (Roo Code's
// alwaysAllowSubtasks). A tool the catalog does not declare has none, so it
// is always put to the person.
func approvalGroup(tool string) string {
	t, ok := catalog.Lookup(tool)
	switch {
	case !ok:
		return ""
	case tool == "new_task":
		return GroupSubtasks
	}
	return string(t.Group)
}
