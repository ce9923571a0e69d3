package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"

	"github.com/intentgate/intentgate/internal/adapter"
)

// errNotOurs marks a socket that something other than an intentgate daemon
// of this very executable answers: a command may have put it there to answer
// in intentgate's place, so it is never asked anything.
var errNotOurs = errors.New("not served by this intentgate executable")

// Forward has the daemon serving a workspace handle an event, when
// one runs there. ok is false when there is none (or it cannot be trusted,
// or it failed to answer): the event is then handled in this process, with
// the same result, since all the state either uses is in .orchestration/.
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
		client := &http.Client{Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return dialDaemon(ctx, sock)
			},
			DisableKeepAlives:  true,
			DisableCompression: true,
		}}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://intentgate/v1/hook/"+agent, bytes.NewReader(raw))
		if err != nil {
			return adapter.Reply{}, false
		}
		req.Header.Set(daemonDirHeader, dir)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			var dial *dialError
			if !errors.As(err, &dial) {
				// The daemon was reached and may have handled the event
				// before it stopped: handling it again here would record
				// its change twice.
				return midEvent(errw, agent, sock, raw, err), true
			}
			if errors.Is(err, errNotOurs) {
				fmt.Fprintf(errw, "intentgate hook %s: the daemon at %s did not answer (%v); handling the event here\n", agent, sock, err)
			}
			return adapter.Reply{}, false
		}
		defer resp.Body.Close()
		var dr daemonReply
		if resp.StatusCode != http.StatusOK {
			if resp.StatusCode != http.StatusMisdirectedRequest {
				msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
				fmt.Fprintf(errw, "intentgate hook %s: the daemon at %s answered %s: %s; handling the event here\n", agent, sock, resp.Status, bytes.TrimSpace(msg))
			}
			return adapter.Reply{}, false
		}
		if err := json.NewDecoder(resp.Body).Decode(&dr); err != nil {
			return midEvent(errw, agent, sock, raw, fmt.Errorf("its answer cannot be read: %w", err)), true
		}
		io.WriteString(errw, dr.Stderr)
		return dr.Reply, true
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

// dialError is a connection that could not be made: no daemon listens.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// dialDaemon connects to the socket and checks that the process answering
// runs this same intentgate executable, as this user.
func dialDaemon(ctx context.Context, sock string) (net.Conn, error) {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, &dialError{err}
	}
	if err := verifyPeer(c); err != nil {
		c.Close()
		return nil, &dialError{fmt.Errorf("%w: %v", errNotOurs, err)}
	}
	return c, nil
}
