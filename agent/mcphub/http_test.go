package mcphub_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The hub reaches a remote server over streamable HTTP: the everything
// server from npm, started by the test on a free port.
func TestStreamableHTTPServer(t *testing.T) {
	bin := needServers(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv := exec.Command(filepath.Join(bin, "mcp-server-everything"), "streamableHttp")
	srv.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i == 600 {
			t.Fatalf("the server never listened on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}

	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".roo"), 0o755)
	t.Setenv("IG_TEST_MCP_TOKEN", "t0ken")
	cfg := fmt.Sprintf(`{"mcpServers":{"remote":{"type":"streamable-http","url":"http://%s/mcp","headers":{"Authorization":"Bearer ${env:IG_TEST_MCP_TOKEN}"}}}}`, addr)
	if err := os.WriteFile(filepath.Join(dir, ".roo", "mcp.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	h := mcphub.New(mcphub.Options{Workspace: dir})
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := h.CallTool(ctx, "remote", "get-sum", map[string]any{"a": 20, "b": 22})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text += tc.Text
		}
	}
	if !strings.Contains(text, "42") {
		t.Errorf("get-sum over HTTP = %q, want 42 in it", text)
	}
	rr, err := h.ReadResource(ctx, "remote", "demo://resource/dynamic/text/3")
	if err != nil || len(rr.Contents) == 0 || !strings.Contains(rr.Contents[0].Text, "3") {
		t.Errorf("resource over HTTP = %+v, %v", rr, err)
	}
}
