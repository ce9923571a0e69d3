package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/spf13/cobra"
)

// maxCallBytes bounds one JSONL call; a longer line is answered with an error
// and skipped, never half-read.
const maxCallBytes = 64 << 20

type dispatchOptions struct {
	workspace string
	agent     string
	model     string
}

// callLine is one call as dispatch reads it.
type callLine struct {
	ID      string          `json:"id"`
	Session string          `json:"session"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Agent   engine.Agent    `json:"agent"`
}

// resultLine is one answer as dispatch writes it.
type resultLine struct {
	ID       string         `json:"id"`
	OK       bool           `json:"ok"`
	Output   string         `json:"output,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
	Denial   *engine.Denial `json:"denial,omitempty"`
	Error    string         `json:"error,omitempty"`
	Warnings []string       `json:"warnings,omitempty"`
}

func newDispatchCmd() *cobra.Command {
	o := &dispatchOptions{}
	cmd := &cobra.Command{
		Use:   "dispatch",
		Short: "Run JSON tool calls from stdin through the engine, one per line",
		Long: `dispatch reads one JSON call per line on stdin, runs it through the engine
in the workspace, and writes one JSON result per line on stdout.

A call:
  {"id":"1","session":"s1","tool":"write_to_file",
   "args":{"path":"src/a.go","content":"package a\n"},
   "agent":{"name":"my-agent","model":"some-model"}}

A result is one of:
  {"id":"1","ok":true,"output":"..."}
  {"id":"1","ok":false,"denial":{"error":"SCOPE_VIOLATION",...}}
  {"id":"1","ok":false,"error":"..."}            (the tool itself failed)
A result may carry "warnings" when the call happened but recording it failed,
and "data" with what the call decided for the session (a mode switch, a todo
list, a question for the user, a completion, a delegated task).

Tools: select_active_intent, read_file, list_files, search_files,
list_code_definition_names, write_to_file, apply_diff, insert_content,
search_and_replace, execute_command, ask_followup_question,
attempt_completion, switch_mode, new_task, update_todo_list.
Session state lives in .orchestration/sessions/, so a session may span many
dispatch processes. The calls of one session run in order.

The workspace is found from --workspace (default: the current directory)
upwards: the nearest directory with .orchestration/, or the outermost one
above it whose .orchestration/ declares intents. Where there is none,
dispatch refuses to start: run "intentgate init" first.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDispatch(cmd.Context(), o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.workspace, "workspace", "w", ".", "a directory in the workspace (the workspace is found upwards from it)")
	cmd.Flags().StringVar(&o.agent, "agent", "", "agent name for calls that name none")
	cmd.Flags().StringVar(&o.model, "model", "", "model id for calls that name none")
	return cmd
}

func runDispatch(ctx context.Context, o *dispatchOptions, in io.Reader, out, errw io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	root, err := gate.Find(o.workspace)
	if err != nil {
		return err
	}
	rt, err := gate.Open(root, gate.Options{Version: version})
	if err != nil {
		return err
	}
	defer rt.Close()

	r := bufio.NewReaderSize(in, 1<<16)
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	reported := ""
	for n := 1; ; n++ {
		line, rerr := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 || errors.Is(rerr, errLineTooLong) {
			res := dispatchLine(ctx, rt, o, n, line, rerr)
			reported = reportProblem(rt, reported, errw)
			if err := enc.Encode(res); err != nil {
				return err
			}
			// Flush per answer: the caller may be waiting for it before it
			// sends the next call.
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

// reportProblem tells the person running dispatch, once per new problem,
// that an edit of active_intents.yaml was rejected and the last good intents
// stay in force.
func reportProblem(rt *gate.Runtime, last string, errw io.Writer) string {
	p := rt.IntentsProblem()
	if p == nil {
		return ""
	}
	if msg := p.Error(); msg != last {
		fmt.Fprintf(errw, "intentgate: the last edit of active_intents.yaml was rejected; the previous intents stay in force:\n%s\n", msg)
		return msg
	}
	return last
}

var errLineTooLong = fmt.Errorf("call is longer than %d bytes", maxCallBytes)

// readLine returns the next line without its newline. A line over the limit
// is consumed to its end and reported as errLineTooLong.
func readLine(r *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) <= maxCallBytes {
			buf = append(buf, chunk...)
		} else {
			buf = buf[:0]
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

func dispatchLine(ctx context.Context, rt *gate.Runtime, o *dispatchOptions, n int, line []byte, rerr error) resultLine {
	if errors.Is(rerr, errLineTooLong) {
		return resultLine{Error: fmt.Sprintf("line %d: %v", n, rerr)}
	}
	var cl callLine
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cl); err != nil {
		return resultLine{ID: cl.ID, Error: fmt.Sprintf(`line %d: not a call: %v (want {"id":"1","session":"s1","tool":"read_file","args":{"path":"README.md"}})`, n, err)}
	}
	if cl.ID == "" {
		cl.ID = fmt.Sprintf("line-%d", n)
	}
	if cl.Tool == "" {
		return resultLine{ID: cl.ID, Error: fmt.Sprintf(`line %d: the call names no "tool"`, n)}
	}
	if cl.Agent.Name == "" {
		cl.Agent.Name = o.agent
	}
	if cl.Agent.Model == "" {
		cl.Agent.Model = o.model
	}
	c := &engine.Call{ID: cl.ID, Session: cl.Session, Tool: cl.Tool, Args: cl.Args, Agent: cl.Agent}
	res, err := rt.Dispatch(ctx, c)
	out := resultLine{ID: cl.ID}
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
