package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An MCP connection's own session lives in the server's process: what its
// calls derive for it (read hashes, usage counters) is held in memory and
// written when a durable change comes or the connection ends. So reads
// write nothing at all.

// treeFile is what a read must leave as it was: the same file (not one
// renamed over it), with the same bytes and times.
type treeFile struct {
	info os.FileInfo
	sum  string
}

func treeOf(t *testing.T, root string) map[string]treeFile {
	t.Helper()
	files := map[string]treeFile{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := treeFile{info: info}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			f.sum = hex.EncodeToString(sum[:])
		}
		files[p] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func unchangedTree(t *testing.T, what string, before, after map[string]treeFile) {
	t.Helper()
	for p, a := range after {
		b, ok := before[p]
		switch {
		case !ok:
			t.Errorf("%s created %s", what, p)
		case !os.SameFile(a.info, b.info):
			t.Errorf("%s replaced %s", what, p)
		case a.sum != b.sum || a.info.Size() != b.info.Size() || !a.info.ModTime().Equal(b.info.ModTime()) || a.info.Mode() != b.info.Mode():
			t.Errorf("%s changed %s", what, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s removed %s", what, p)
		}
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// sessionFiles returns the session files of ws, by name.
func sessionFiles(t *testing.T, ws string) map[string]string {
	t.Helper()
	dir := filepath.Join(ws, ".orchestration", "sessions")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = string(b)
		}
	}
	return out
}

func mcpBinary(t *testing.T, ws string, args ...string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(e2eBinary(t), append([]string{"mcp", "--workspace", ws}, args...)...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-stdio", Version: "1.0.0"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, cmd
}

func TestMCPReadsWriteNothing(t *testing.T) {
	t.Parallel()
	const app = "package app\n"
	ws := e2eWorkspace(t, mcpIntents, map[string]string{"src/app.txt": app, "src/b.txt": "b\n"})
	cs, _ := mcpBinary(t, ws)
	mustOK := func(tool string, args map[string]any) string {
		t.Helper()
		isErr, text := mcpCall(t, cs, tool, args)
		if isErr {
			t.Fatalf("%s: %s", tool, text)
		}
		return text
	}
	mustOK("select_active_intent", map[string]any{"intent_id": "INT-001"})
	mustOK("write_to_file", map[string]any{"path": "src/new.txt", "content": "new\n", "line_count": 1})

	before := treeOf(t, ws)
	for range 3 {
		if text := mustOK("read_file", map[string]any{"path": "src/app.txt"}); !strings.Contains(text, "package app") {
			t.Fatalf("read_file: %q", text)
		}
		if text := mustOK("list_files", map[string]any{"path": "src"}); !strings.Contains(text, "b.txt") {
			t.Fatalf("list_files: %q", text)
		}
	}
	unchangedTree(t, "read_file and list_files", before, treeOf(t, ws))
	for name, body := range sessionFiles(t, ws) {
		if strings.Contains(body, sha256Hex(app)) {
			t.Errorf("session file %s has the read's hash before anything was written", name)
		}
	}

	// The read counts for this session's next write, from memory.
	mustOK("write_to_file", map[string]any{"path": "src/app.txt", "content": "package app // 2\n", "line_count": 1})
	// A file the session has not read is still refused.
	isErr, text := mcpCall(t, cs, "write_to_file", map[string]any{"path": "src/b.txt", "content": "c\n", "line_count": 1})
	if d := decodeDenial(t, text); !isErr || d.Code != "NOT_READ" {
		t.Fatalf("write of an unread file: isError=%v %+v", isErr, d)
	}

	// A durable change writes what was held with it.
	mustOK("read_file", map[string]any{"path": "src/b.txt"})
	mustOK("select_active_intent", map[string]any{"intent_id": "INT-001"})
	held := false
	for _, body := range sessionFiles(t, ws) {
		held = held || strings.Contains(body, sha256Hex("b\n")) && strings.Contains(body, sha256Hex("package app // 2\n"))
	}
	if !held {
		t.Errorf("after select_active_intent, no session file has the hashes read and written before it: %v", sessionFiles(t, ws))
	}

	// The end of the connection writes the rest.
	mustOK("write_to_file", map[string]any{"path": "src/b.txt", "content": "b2\n", "line_count": 1})
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	written := false
	for _, body := range sessionFiles(t, ws) {
		written = written || strings.Contains(body, sha256Hex("b2\n"))
	}
	if !written {
		t.Errorf("after the connection ended, no session file has the last write's hash: %v", sessionFiles(t, ws))
	}
}

// TestMCPHeldReadLostOnKill: a server killed with reads held loses them,
// and the session, taken up again by its id, is refused the write it had
// read for (NOT_READ), never allowed one it had not.
func TestMCPHeldReadLostOnKill(t *testing.T) {
	t.Parallel()
	const app = "package app\n"
	ws := e2eWorkspace(t, mcpIntents, map[string]string{"src/app.txt": app})
	cs, cmd := mcpBinary(t, ws)
	if isErr, text := mcpCall(t, cs, "select_active_intent", map[string]any{"intent_id": "INT-001"}); isErr {
		t.Fatal(text)
	}
	if isErr, text := mcpCall(t, cs, "read_file", map[string]any{"path": "src/app.txt"}); isErr {
		t.Fatal(text)
	}
	files := sessionFiles(t, ws)
	if len(files) != 1 {
		t.Fatalf("session files %v, want the one of the connection", files)
	}
	var id string
	for _, body := range files {
		i := strings.Index(body, `"id":"`)
		if i < 0 {
			t.Fatalf("session file without id: %s", body)
		}
		id, _, _ = strings.Cut(body[i+len(`"id":"`):], `"`)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cs.Close()

	again, _ := mcpBinary(t, ws, "--session", id)
	defer again.Close()
	isErr, text := mcpCall(t, again, "write_to_file", map[string]any{"path": "src/app.txt", "content": "x\n", "line_count": 1})
	if d := decodeDenial(t, text); !isErr || d.Code != "NOT_READ" || d.Intent != "INT-001" {
		t.Fatalf("write after the read was lost: isError=%v %+v", isErr, d)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "src", "app.txt")); !bytes.Equal(b, []byte(app)) {
		t.Errorf("src/app.txt = %q, want it untouched", b)
	}
}
