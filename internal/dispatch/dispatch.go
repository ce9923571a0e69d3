// Package dispatch is the JSON-lines front door of a governed runtime: it
// reads one call per line, runs it through gate.Runtime.Dispatch (the same
// engine every front door uses), and writes one result per line.
//
// A call:
//
//	{"id":"1","session":"s1","tool":"write_to_file","args":{...},"agent":{"name":"a","model":"m"}}
//
// A result is one of:
//
//	{"id":"1","ok":true,"output":"...","data":{...}}
//	{"id":"1","ok":false,"denial":{"error":"SCOPE_VIOLATION",...}}
//	{"id":"1","ok":false,"error":"..."}
//
// with "warnings" when the call happened (or was refused) but recording it
// failed. A line that is not a call is answered with an error and skipped; a
// line over MaxCallBytes is consumed to its end and answered with an error,
// never half-read.
//
// For profiling, INTENTGATE_CPUPROFILE=FILE in the environment writes a
// CPU profile of Serve (go tool pprof reads it) to FILE; it is not for
// users and not in --help.
package dispatch

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/gate"
)

// MaxCallBytes bounds one call line.
const MaxCallBytes = 64 << 20

// Call is one call as dispatch reads it.
type Call struct {
	ID      string          `json:"id"`
	Session string          `json:"session"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Agent   engine.Agent    `json:"agent"`
}

// Result is one answer as dispatch writes it.
type Result struct {
	ID       string         `json:"id"`
	OK       bool           `json:"ok"`
	Output   string         `json:"output,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	Denial   *engine.Denial `json:"denial,omitempty"`
	Error    string         `json:"error,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
}

// Options are the defaults of a stream of calls.
type Options struct {
	// Agent and Model name the agent of calls that name none.
	Agent, Model string
	// Problems, when not nil, is told once per new problem that an edit of
	// active_intents.yaml was rejected and the last good intents stay in
	// force (the person running dispatch reads it; the agent does not).
	Problems io.Writer
}

// Serve answers the calls read from in on out, one line each, until in
// ends. Each answer is flushed before the next call is read: the caller may
// be waiting for it before it sends the next call.
func Serve(ctx context.Context, rt *gate.Runtime, o Options, in io.Reader, out io.Writer) error {
	if p := os.Getenv("INTENTGATE_CPUPROFILE"); p != "" {
		if f, err := os.Create(p); err == nil && pprof.StartCPUProfile(f) == nil {
			defer f.Close()
			defer pprof.StopCPUProfile()
		}
	}
	r := bufio.NewReaderSize(in, 1<<18) // a 64 KiB write in one piece
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	reported := ""
	for n := 1; ; n++ {
		line, rerr := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || errors.Is(rerr, errLineTooLong) {
			res := Line(ctx, rt, o, n, line, rerr)
			reported = reportProblem(rt, reported, o.Problems)
			if err := enc.Encode(res); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil && !errors.Is(rerr, errLineTooLong) {
			return rerr
		}
	}
}

func reportProblem(rt *gate.Runtime, last string, w io.Writer) string {
	p := rt.IntentsProblemSeen()
	if p == nil {
		return ""
	}
	if msg := p.Error(); msg != last {
		if w != nil {
			fmt.Fprintf(w, "intentgate: the last edit of active_intents.yaml was rejected; the previous intents stay in force:\n%s\n", msg)
		}
		return msg
	}
	return last
}

var errLineTooLong = fmt.Errorf("call is longer than %d bytes", MaxCallBytes)

// readLine returns the next line without its newline. A line over the limit
// is consumed to its end and reported as errLineTooLong.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) <= MaxCallBytes {
			buf = append(buf, chunk...)
		} else {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err == nil || err == io.EOF {
				return nil, errLineTooLong
			}
			return nil, err
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			return bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r")), nil
		}
		return buf, err
	}
}

// Line answers line n of a stream; rerr is what reading it returned.
func Line(ctx context.Context, rt *gate.Runtime, o Options, n int, line []byte, rerr error) Result {
	if errors.Is(rerr, errLineTooLong) {
		return Result{Error: fmt.Sprintf("line %d: %v", n, rerr)}
	}
	cl, argm, ok := splitCall(line)
	if !ok {
		cl = Call{}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cl); err != nil {
			return Result{ID: cl.ID, Error: fmt.Sprintf(`line %d: not a call: %v (want {"id":"1","session":"s1","tool":"read_file","args":{"path":"README.md"}})`, n, err)}
		}
	}
	if cl.ID == "" {
		cl.ID = fmt.Sprintf("line-%d", n)
	}
	if cl.Tool == "" {
		return Result{ID: cl.ID, Error: fmt.Sprintf(`line %d: the call names no "tool"`, n)}
	}
	if cl.Agent.Name == "" {
		cl.Agent.Name = o.Agent
	}
	if cl.Agent.Model == "" {
		cl.Agent.Model = o.Model
	}
	c := &engine.Call{ID: cl.ID, Session: cl.Session, Tool: cl.Tool, Args: cl.Args, Agent: cl.Agent}
	if argm != nil {
		c.SetArgs(cl.Args, argm)
	}
	res, err := rt.Dispatch(ctx, c)
	out := Result{ID: cl.ID}
	var pe *engine.PostError
	switch {
	case err == nil:
	case errors.As(err, &pe):
		for _, e := range pe.Errs {
			out.Warnings = append(out.Warnings, "the call happened but was not fully recorded: "+e.Error())
		}
	default:
		if d, ok := engine.AsDenial(err); ok {
			out.Denial = d
			if d.NotRecorded != nil {
				out.Warnings = append(out.Warnings, "the refusal was not recorded: "+d.NotRecorded.Error())
			}
		} else {
			out.Error = err.Error()
		}
		return out
	}
	out.OK = true
	out.Output = res.Output
	out.Data = res.Data
	return out
}

// splitCall reads a call line of the common shape (the known keys once
// each, strings, and "args" and "agent" objects of strings) in one pass
// over its bytes: encoding/json's Decoder scans a 64 KiB content twice and
// copies it. ok is false for any other line, which encoding/json then
// decodes (or refuses) as before; FuzzSplitCall checks that both read the
// same call wherever splitCall answers.
//
// argm are the members of "args", split on the way (nil without "args").
func splitCall(line []byte) (cl Call, argm map[string]json.RawMessage, ok bool) {
	m, nested, ok := engine.SplitObject(line)
	if !ok {
		return Call{}, nil, false
	}
	for k, v := range m {
		switch k {
		case "id":
			cl.ID, ok = engine.Unquote(v)
		case "session":
			cl.Session, ok = engine.Unquote(v)
		case "tool":
			cl.Tool, ok = engine.Unquote(v)
		case "args":
			ok = len(v) > 0 && v[0] == '{'
			cl.Args, argm = v, nested[k]
		case "agent":
			cl.Agent, ok = splitAgent(v)
		default:
			ok = false // encoding/json matches keys without regard to case
		}
		if !ok {
			return Call{}, nil, false
		}
	}
	return cl, argm, true
}

func splitAgent(raw []byte) (a engine.Agent, ok bool) {
	m, _, ok := engine.SplitObject(raw)
	if !ok || len(raw) == 0 || raw[0] != '{' {
		return a, false
	}
	for k, v := range m {
		switch k {
		case "name":
			a.Name, ok = engine.Unquote(v)
		case "model":
			a.Model, ok = engine.Unquote(v)
		default:
			ok = false
		}
		if !ok {
			return a, false
		}
	}
	return a, true
}
