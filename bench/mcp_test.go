package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPWrite measures write_to_file calls per second through
// `intentgate mcp` (every call checked, recorded in the ledger with fsync)
// against write_file of @modelcontextprotocol/server-filesystem, the
// reference MCP filesystem server, both driven by the Go SDK's client over
// stdio. Each call rewrites one of 32 files with 20 lines.
func BenchmarkMCPWrite(b *testing.B) {
	content := strings.Repeat("func f() { return }\n", 20)
	run := func(b *testing.B, cmd *exec.Cmd, tool string, args func(i int) map[string]any, setup func(*mcp.ClientSession)) {
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil).
			Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		if setup != nil {
			setup(cs)
		}
		call := func(i int) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args(i)})
			if err != nil {
				b.Fatal(err)
			}
			if res.IsError {
				b.Fatalf("%s: %v", tool, res.Content[0].(*mcp.TextContent).Text)
			}
		}
		for i := range 32 { // every file exists before the clock starts
			call(i)
		}
		n := 0
		for b.Loop() {
			call(n)
			n++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	}

	b.Run("intentgate", func(b *testing.B) {
		ws := workspace(b, "")
		run(b, exec.Command(intentgate(b), "mcp", "-w", ws), "write_to_file",
			func(i int) map[string]any {
				return map[string]any{"path": fmt.Sprintf("src/f%02d.txt", i%32), "content": fmt.Sprintf("// %d\n%s", i, content), "line_count": 21}
			},
			func(cs *mcp.ClientSession) {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "select_active_intent", Arguments: map[string]any{"intent_id": "INT-001"}})
				if err != nil || res.IsError {
					b.Fatalf("select_active_intent: %v %+v", err, res)
				}
			})
	})
	b.Run("server-filesystem", func(b *testing.B) {
		node, dir := nodeModules(b, "@modelcontextprotocol/server-filesystem")
		ws := workspace(b, "")
		server := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
		run(b, exec.Command(node, server, ws), "write_file",
			func(i int) map[string]any {
				return map[string]any{"path": filepath.Join(ws, "src", fmt.Sprintf("f%02d.txt", i%32)), "content": fmt.Sprintf("// %d\n%s", i, content)}
			}, nil)
	})
}
