// Package hookclient is the hook process's side of the daemon's socket
// (package daemon serves it): it offers an event to the daemon serving the
// workspace, when one runs there. It speaks the little HTTP/1.0 the socket
// needs itself, and dials the socket with system calls of its own, so that
// a hook process links neither an HTTP library nor package net (which would
// make it a dynamically linked cgo executable, slower to start).
package hookclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/adapter"
	"github.com/intentgate/intentgate/internal/peer/kernel"
	"github.com/intentgate/intentgate/internal/selfexe"
	"github.com/intentgate/intentgate/orchestration"
)

// SocketName is the daemon's socket in .orchestration/.
const SocketName = "intentgate.sock"

// DirHeader carries the workspace the hook process found, as it found it,
// to the daemon.
const DirHeader = "X-Intentgate-Dir"

// Answer is the socket protocol's answer: the reply in neutral form, for
// the hook process to render, and what would have gone to its stderr.
type Answer struct {
	Reply  adapter.Reply `json:"reply"`
	Stderr string        `json:"stderr,omitempty"`
}

const isWindows = runtime.GOOS == "windows"

// CanVerifyPeer: the kernel says who listens on a socket. Where it cannot,
// the hook never uses the socket and the daemon makes none unless told to;
// the daemon's HTTP hooks still work.
const CanVerifyPeer = kernel.CanAsk

// errNotOurs marks a socket that something other than an intentgate daemon
// of this installation answers: a command may have put it there to answer
// in intentgate's place, so it is never asked anything.
var errNotOurs = errors.New("not served by this intentgate executable")

// Forward has the daemon serving a workspace handle an event, when
// one runs there. ok is false when there is none (or it cannot be trusted,
// or it failed to answer): the event is then handled in this process, with
// the same result, since all the state either uses is in .orchestration/.
//
// The daemon must run this process's executable, or the intentgate or
// intentgate-full executable beside it (intentgate-hook is installed next
// to intentgate, which runs intentgate-full for the daemon).
//
// Where no daemon was ever started this costs one lstat; where one was and
// is gone, one refused connect.
func Forward(errw io.Writer) func(ctx context.Context, dir, agent string, raw []byte) (adapter.Reply, bool) {
	return func(ctx context.Context, dir, agent string, raw []byte) (adapter.Reply, bool) {
		if !CanVerifyPeer || os.Getenv("INTENTGATE_NO_DAEMON") != "" {
			return adapter.Reply{}, false
		}
		sock := os.Getenv("INTENTGATE_SOCKET")
		if sock == "" {
			sock = filepath.Join(dir, orchestration.DirName, SocketName)
		}
		if fi, err := os.Lstat(sock); err != nil || (fi.Mode().Type() != fs.ModeSocket && !isWindows) {
			return adapter.Reply{}, false
		}
		if ctx == nil {
			ctx = context.Background()
		}
		c, err := dialDaemon(ctx, sock)
		if err != nil {
			if errors.Is(err, errNotOurs) {
				fmt.Fprintf(errw, "intentgate hook %s: the daemon at %s did not answer (%v); handling the event here\n", agent, sock, err)
			}
			return adapter.Reply{}, false
		}
		defer c.Close()
		if dl, ok := ctx.Deadline(); ok {
			c.SetDeadline(dl)
		}
		status, msg, body, err := exchange(c, agent, dir, raw)
		if err != nil {
			// The daemon was reached and may have handled the event
			// before it stopped: handling it again here would record
			// its change twice.
			return midEvent(errw, agent, sock, raw, err), true
		}
		if status != 200 {
			if status != 421 { // Misdirected Request: another workspace's daemon
				fmt.Fprintf(errw, "intentgate hook %s: the daemon at %s answered %s: %s; handling the event here\n", agent, sock, msg, bytes.TrimSpace(firstKiB(body)))
			}
			return adapter.Reply{}, false
		}
		var a Answer
		if err := json.Unmarshal(body, &a); err != nil {
			return midEvent(errw, agent, sock, raw, fmt.Errorf("its answer cannot be read: %w", err)), true
		}
		io.WriteString(errw, a.Stderr)
		return a.Reply, true
	}
}

func firstKiB(b []byte) []byte {
	if len(b) > 1<<10 {
		return b[:1<<10]
	}
	return b
}

// maxAnswerBytes bounds the daemon's answer.
const maxAnswerBytes = 2 * adapter.MaxEventBytes

// exchange posts the event and reads the answer: status code, status line
// and body.
func exchange(c io.ReadWriter, agent, dir string, raw []byte) (int, string, []byte, error) {
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST /v1/hook/%s HTTP/1.0\r\nHost: intentgate\r\n%s: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		agent, DirHeader, dir, len(raw))
	req.Write(raw)
	if _, err := c.Write(req.Bytes()); err != nil {
		return 0, "", nil, err
	}
	return readResponse(bufio.NewReader(c))
}

// readResponse reads an HTTP/1.x response to a request sent as HTTP/1.0:
// no chunking, and the body ends at its Content-Length or at the end of the
// connection.
func readResponse(r *bufio.Reader) (status int, line string, body []byte, err error) {
	line, err = readLine(r)
	if err != nil {
		return 0, "", nil, fmt.Errorf("no answer: %w", err)
	}
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	status, cerr := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || len(code) != 3 || cerr != nil || status < 100 {
		return 0, "", nil, fmt.Errorf("not an HTTP answer: %q", line)
	}
	length := int64(-1)
	for {
		h, err := readLine(r)
		if err != nil {
			return 0, "", nil, fmt.Errorf("answer headers: %w", err)
		}
		if h == "" {
			break
		}
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return 0, "", nil, fmt.Errorf("malformed answer header %q", h)
		}
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "content-length":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 || (length >= 0 && n != length) {
				return 0, "", nil, fmt.Errorf("bad Content-Length %q", v)
			}
			length = n
		case "transfer-encoding":
			return 0, "", nil, fmt.Errorf("unexpected Transfer-Encoding %q in an HTTP/1.0 answer", v)
		}
	}
	if length > maxAnswerBytes {
		return 0, "", nil, fmt.Errorf("answer of %d bytes, more than %d", length, maxAnswerBytes)
	}
	if length >= 0 {
		body = make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			return 0, "", nil, fmt.Errorf("answer body: %w", err)
		}
		return status, rest, body, nil
	}
	body, err = io.ReadAll(io.LimitReader(r, maxAnswerBytes+1))
	if err != nil {
		return 0, "", nil, fmt.Errorf("answer body: %w", err)
	}
	if len(body) > maxAnswerBytes {
		return 0, "", nil, fmt.Errorf("answer of more than %d bytes", maxAnswerBytes)
	}
	return status, rest, body, nil
}

// readLine reads one header line (CRLF or LF), at most 64 KiB.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, more, err := r.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > 64<<10 {
			return "", errors.New("header line longer than 64 KiB")
		}
		if !more {
			return string(b), nil
		}
	}
}

// midEvent is the answer when the daemon took the event and stopped before
// answering (killed, crashed): it may or may not have handled it, and only
// it knew. A pre-tool event is refused (the agent may retry it); after a
// tool ran, the person is told that its change may be unrecorded. The
// event is never handled a second time here.
func midEvent(errw io.Writer, agent, sock string, raw []byte, err error) adapter.Reply {
	why := fmt.Sprintf("the intentgate daemon at %s stopped in the middle of this event (%v); it may or may not have handled it, so it was not handled again", sock, err)
	fmt.Fprintf(errw, "intentgate hook %s: %s\n", agent, why)
	kind := adapter.Unknown
	if d, ok := adapter.Lookup(agent); ok {
		if ev, err := d.Parse(raw); ev != nil && err == nil {
			kind = ev.Kind
		}
	}
	if kind == adapter.PreTool || kind == adapter.Unknown {
		den := &engine.Denial{Code: engine.HookError, Message: why,
			Hint: "this is not about your request; try the same call again"}
		return adapter.Reply{Deny: string(den.JSON()), Message: "intentgate: " + why}
	}
	return adapter.Reply{Message: "intentgate: " + why + "; `intentgate trace verify` shows whether its change was recorded"}
}

// conn is a connection to the daemon's socket.
type conn interface {
	io.ReadWriteCloser
	SetDeadline(time.Time) error
}

// dialDaemon connects to the socket and checks that the process answering
// runs this intentgate installation, as this user.
func dialDaemon(ctx context.Context, sock string) (conn, error) {
	f, cr, err := dialUnix(ctx, sock, time.Second)
	if err != nil {
		return nil, err
	}
	if err := verifyPeer(cr); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %v", errNotOurs, err)
	}
	return f, nil
}

// verifyPeer checks, through the kernel's record of who listens on the
// socket (cr), that it is this user running this executable, or the
// intentgate or intentgate-full beside it (intentgate runs intentgate-full
// for serve).
func verifyPeer(cr kernel.Cred) error {
	if cr.UID != os.Geteuid() {
		return fmt.Errorf("the socket's process runs as uid %d", cr.UID)
	}
	var beside []string
	if exe, err := os.Executable(); err == nil {
		beside = selfexe.Beside(exe)
	}
	return kernel.SameExecutableAs(cr.PID, beside...)
}
