package tools

import (
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"

	"github.com/intentgate/intentgate/engine"
)

//go:embed instructions/*.md
var instructionFiles embed.FS

// InstructionTasks are the tasks fetch_instructions knows, as in Roo Code.
var InstructionTasks = []string{"create_mcp_server", "create_mode"}

// FetchInstructions is fetch_instructions(task): step-by-step instructions
// for a task the system prompt only names, so that the prompt stays short.
func FetchInstructions() engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		task, err := c.Require("task")
		if err != nil {
			return nil, err
		}
		task = strings.TrimSpace(task)
		if !slices.Contains(InstructionTasks, task) {
			return nil, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "task",
				Message: fmt.Sprintf("there are no instructions for %q", task),
				Hint:    "ask for one of: " + strings.Join(InstructionTasks, ", ")}
		}
		b, err := instructionFiles.ReadFile("instructions/" + task + ".md")
		if err != nil {
			return nil, err
		}
		return &engine.Result{Output: string(b)}, nil
	})
}
