//go:build linux

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// `intentgate mcp` reads a pipe on stdin through Go's poller, which needs
// O_NONBLOCK on the pipe; the flag belongs to the open pipe, which the
// client shares, so the server clears it again when it ends.
func TestMCPStdinPipeLeftBlocking(t *testing.T) {
	t.Parallel()
	ws := e2eWorkspace(t, mcpIntents, nil)
	// A blocking pipe, as a shell or a client's library makes (os.Pipe's
	// read end would be nonblocking already).
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "stdin-r"), os.NewFile(uintptr(fds[1]), "stdin-w")
	defer r.Close()
	defer w.Close()
	cmd := exec.Command(e2eBinary(t), "mcp", "--workspace", ws)
	cmd.Stdin = r // the child's fd 0 is this open pipe
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	nonblock := func() bool {
		t.Helper()
		fl, err := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fl&unix.O_NONBLOCK != 0
	}
	io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("answer to initialize: %q, %v", line, err)
	}
	if !nonblock() {
		t.Log("the server reads its pipe without O_NONBLOCK (not through the poller)")
	}
	w.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("mcp after end of input: %v", err)
	}
	if nonblock() {
		t.Error("the pipe the client gave as stdin is left with O_NONBLOCK after the server ended")
	}
}
