package hooks

import (
	"context"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// Intact refuses every call while intentgate's own directory is not what it
// made (a command replaced it, or a file in it, with a symlink): the records
// of the call would be written wherever the link points.
func Intact(orchDir string) engine.PreHook {
	return engine.PreFunc(func(ctx context.Context, c *engine.Call) error {
		if err := orchestration.CheckIntact(orchDir); err != nil {
			return &engine.Denial{Code: engine.HookError, Message: err.Error(),
				Hint: "stop and tell the user: intentgate's records directory was tampered with and must be restored"}
		}
		return nil
	})
}
