// Command minihook is the floor for a hook written in Go: it reads the
// event's JSON from stdin, decodes it, and prints an allowing answer. The
// hook benchmarks compare `intentgate hook` with it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	var ev map[string]any
	if err := json.NewDecoder(os.Stdin).Decode(&ev); err != nil {
		fmt.Fprintln(os.Stderr, "minihook:", err)
		os.Exit(1)
	}
	name, _ := ev["hook_event_name"].(string)
	out, _ := json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": name, "permissionDecision": "allow"}})
	os.Stdout.Write(append(out, '\n'))
}
