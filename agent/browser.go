package agent

import (
	"encoding/json"

	"github.com/intentgate/intentgate/engine"
)

// browserFollowOn reports a browser_action other than launch. As in the
// reference, only the launch is put to the person (ask
// browser_action_launch, unless the browser group is auto-approved); the
// clicks, typing and scrolling of a browser the person let open are not.
func browserFollowOn(tool string, args map[string]json.RawMessage) bool {
	return tool == "browser_action" && str(args, "action") != "launch"
}

// resultImages are the images a tool's result carries as data URLs (a
// browser screenshot, an MCP tool's images); they go to the model with the
// tool_result.
func resultImages(res *engine.Result) []string {
	if res == nil {
		return nil
	}
	switch v := res.Data["images"].(type) {
	case []string:
		return v
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
