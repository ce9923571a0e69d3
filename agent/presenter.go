package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/tools"
)

// presenter takes the tool calls of one assistant message through the
// governed runtime, one at a time: pre-hooks, then approval, then the tool
// and the post-hooks. A refused call is never put to the person.
type presenter struct {
	t        *Task
	used     bool // a tool ran in this message
	rejected bool // the person rejected a call of this message
}

// maxDiffBytes bounds the file read to show a change as a diff.
const maxDiffBytes = 1 << 20

func toolResult(id, text string, isErr bool) provider.Block {
	return provider.Block{Type: provider.ToolResult, ToolUseID: id, Content: text, IsError: isErr}
}

func (p *presenter) present(ctx context.Context, uses []provider.Block) ([]provider.Block, Outcome, string, error) {
	var results []provider.Block
	for _, u := range uses {
		switch {
		case p.rejected:
			results = append(results, toolResult(u.ID, fmt.Sprintf("Skipping tool [%s] due to user rejecting a previous tool.", u.Name), true))
			continue
		case p.used:
			results = append(results, toolResult(u.ID, fmt.Sprintf("Tool [%s] was not executed because a tool has already been used in this message. Only one tool may be used per message. You must assess the first tool's result before proceeding to use the next tool.", u.Name), true))
			continue
		}
		p.used = true
		res, done, completion, err := p.one(ctx, u)
		if err != nil {
			return nil, "", "", err
		}
		results = append(results, res...)
		if done != "" {
			return results, done, completion, nil
		}
	}
	return results, "", "", nil
}

// mistake counts a model error and reports it in the stream.
func (p *presenter) fail(u provider.Block, text string, mistake bool) []provider.Block {
	t := p.t
	if mistake {
		t.mistakes++
	}
	t.tools.fail(u.Name)
	t.say(SayError, text)
	t.emit(Event{Name: EventToolFailed, State: t.State(), Tool: u.Name, Error: text})
	return []provider.Block{toolResult(u.ID, text, true)}
}

func (p *presenter) call(u provider.Block) *engine.Call {
	t := p.t
	return &engine.Call{ID: u.ID, Session: t.id, Tool: u.Name, Args: u.Input,
		Agent: engine.Agent{Name: "intentgate-agent", Model: t.opts.Model}, WS: t.opts.WS}
}

// one presents a single tool call. It returns the tool_result blocks for the
// model, and an outcome when the task ends with this call.
func (p *presenter) one(ctx context.Context, u provider.Block) ([]provider.Block, Outcome, string, error) {
	t := p.t
	t.tools.attempt(u.Name)
	var args map[string]json.RawMessage
	if err := json.Unmarshal(u.Input, &args); err != nil || args == nil {
		return p.fail(u, fmt.Sprintf("The arguments of %s are not a JSON object (%v). Send the arguments as one JSON object matching the tool's schema.", u.Name, errOr(err, "null")), true), "", "", nil
	}
	sig := u.Name + "\x00" + string(u.Input)
	if sig == t.lastCall {
		t.repeats++
	} else {
		t.lastCall, t.repeats = sig, 1
	}
	if t.repeats >= 3 {
		t.repeats = 0
		return p.fail(u, fmt.Sprintf("%s was called with the same arguments %d times in a row, which suggests a loop. Try a different approach.", u.Name, 3), true), "", "", nil
	}

	switch u.Name {
	case "ask_followup_question":
		return p.followup(ctx, u, args)
	case "attempt_completion":
		return p.completion(ctx, u, args)
	}

	// The runtime runs the pre-hooks, then asks (a refused call is never
	// offered for approval), then runs the tool and the post-hooks.
	var rejected *rejection
	feedback := ""
	var approve engine.Approve
	if group := approvalGroup(u.Name); !t.opts.AutoApprove.Allows(group) && !browserFollowOn(u.Name, args) {
		approve = func(ctx context.Context, _ *engine.Call) error {
			kind, text := p.askFor(u, args)
			a, err := t.ask(ctx, kind, text)
			if err != nil {
				return err
			}
			if a.Text != "" {
				t.say(SayUserFeedback, a.Text)
			}
			if a.Response != YesButtonClicked {
				rejected = &rejection{feedback: a.Text}
				return rejected
			}
			feedback = a.Text
			return nil
		}
	}
	if u.Name == "new_task" {
		return p.subtask(ctx, u, args, approve, &feedback, &rejected)
	}
	dctx, commandDone := ctx, func() (string, bool) { return "", false }
	if u.Name == "execute_command" {
		dctx, commandDone = p.commandContext(ctx)
	}
	res, err := t.opts.Runtime.DispatchApproved(dctx, p.call(u), approve)
	keptFeedback, _ := commandDone()
	if rejected != nil {
		return p.denied(u, rejected), "", "", nil
	}
	var pe *engine.PostError
	switch {
	case err == nil:
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return nil, "", "", err
	case errors.As(err, &pe):
		// The call happened; what failed is its record, which the person
		// must know about. The model gets the result.
		t.say(SayError, "The call ran but was not fully recorded: "+pe.Error())
	default:
		if _, ok := engine.AsDenial(err); ok {
			return p.refused(u, err), "", "", nil
		}
		return p.fail(u, fmt.Sprintf("Error executing %s: %v", u.Name, err), true), "", "", nil
	}
	t.mistakes = 0
	out := res.Output
	if u.Name == "execute_command" {
		t.say(SayCommandOutput, out)
		if keptFeedback != "" {
			// Let go with a message: the model reads it as feedback,
			// in the reference's words.
			t.say(SayUserFeedback, keptFeedback)
			out = strings.TrimSuffix(out, tools.StillRunningFuture) + "The user provided the following feedback:\n<feedback>\n" + keptFeedback + "\n</feedback>"
		}
	}
	if u.Name == "switch_mode" {
		if m, ok := res.Data["mode"].(string); ok && m != "" {
			t.mode = m
			t.emit(Event{Name: EventModeSwitched, State: t.State(), Mode: m})
		}
	}
	if feedback != "" {
		out += "\n\nThe user approved this operation and provided the following context:\n<feedback>\n" + feedback + "\n</feedback>"
	}
	r := toolResult(u.ID, out, false)
	r.Images = resultImages(res)
	return []provider.Block{r}, "", "", nil
}

// rejection is the person's "no" to a call, returned by the approval so the
// tool does not run.
type rejection struct{ feedback string }

func (r *rejection) Error() string { return "the user denied this operation" }

// denied is what the model gets for a call the person rejected; the rest of
// the message's calls are skipped.
func (p *presenter) denied(u provider.Block, r *rejection) []provider.Block {
	p.rejected = true
	msg := "The user denied this operation."
	if r.feedback != "" {
		msg += " The user provided the following feedback:\n<feedback>\n" + r.feedback + "\n</feedback>"
	}
	return []provider.Block{toolResult(u.ID, msg, false)}
}

func errOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// refused puts a governance refusal in the stream as an error say carrying
// the denial JSON, and gives the model the same JSON.
func (p *presenter) refused(u provider.Block, err error) []provider.Block {
	d, ok := engine.AsDenial(err)
	if !ok {
		return p.fail(u, fmt.Sprintf("Error executing %s: %v", u.Name, err), true)
	}
	mistake := d.Code == engine.MissingParameter || d.Code == engine.InvalidArgument
	return p.fail(u, string(d.JSON()), mistake)
}

func str(args map[string]json.RawMessage, k string) string {
	var s string
	if json.Unmarshal(args[k], &s) != nil {
		return strings.Trim(string(args[k]), `"`)
	}
	return s
}

// askFor is the ask that puts a tool call to the person, with a payload
// showing what will change.
func (p *presenter) askFor(u provider.Block, args map[string]json.RawMessage) (Ask, string) {
	path := str(args, "path")
	st := SayTool{Path: path}
	switch u.Name {
	case "execute_command":
		return AskCommand, str(args, "command")
	case "browser_action":
		if str(args, "action") == "launch" {
			return AskBrowserActionLaunch, str(args, "url")
		}
	case "write_to_file":
		st.Tool = ToolNewFileCreated
		st.Content = str(args, "content")
		// An existing file's change is shown as a diff. The path passed the
		// pre-hooks (inside the workspace); it is checked again here since
		// the file is read for the person.
		if filepath.IsLocal(filepath.FromSlash(path)) {
			full := filepath.Join(p.t.opts.Workspace, filepath.FromSlash(path))
			if fi, err := os.Stat(full); err == nil {
				st.Tool = ToolEditedExistingFile
				if fi.Mode().IsRegular() && fi.Size() <= maxDiffBytes {
					if old, err := os.ReadFile(full); err == nil {
						st.Diff = unifiedDiff(path, string(old), st.Content)
					}
				}
			}
		}
	case "apply_diff":
		st.Tool, st.Diff = ToolAppliedDiff, str(args, "diff")
	case "insert_content":
		st.Tool, st.Diff = ToolInsertContent, str(args, "content")
		var n int
		if json.Unmarshal(args["line"], &n) == nil {
			st.LineNumber = &n
		}
	case "search_and_replace":
		st.Tool, st.Search, st.Replace = ToolSearchAndReplace, str(args, "search"), str(args, "replace")
	case "read_file":
		st.Tool = ToolReadFile
	case "list_files":
		st.Tool = ToolListFilesTopLevel
		if str(args, "recursive") == "true" {
			st.Tool = ToolListFilesRecursive
		}
	case "search_files":
		st.Tool, st.Regex, st.FilePattern = ToolSearchFiles, str(args, "regex"), str(args, "file_pattern")
	case "list_code_definition_names":
		st.Tool = ToolListCodeDefinitionNames
	case "switch_mode":
		return AskTool, mustJSON(ModeSwitchData{Tool: ToolSwitchMode, Mode: str(args, "mode_slug"), Reason: str(args, "reason")})
	case "new_task":
		mode := str(args, "mode")
		if mode == "" {
			mode = str(args, "mode_slug")
		}
		return AskTool, mustJSON(TaskCreationData{Tool: ToolNewTask, Mode: mode, Content: str(args, "message")})
	case "update_todo_list":
		st.Tool = ToolUpdateTodoList
	default:
		st.Tool = u.Name
	}
	return AskTool, mustJSON(st)
}

func (p *presenter) followup(ctx context.Context, u provider.Block, args map[string]json.RawMessage) ([]provider.Block, Outcome, string, error) {
	t := p.t
	res, err := t.opts.Runtime.DispatchApproved(ctx, p.call(u), nil)
	if err != nil {
		var pe *engine.PostError
		if !errors.As(err, &pe) {
			return p.refused(u, err), "", "", nil
		}
	}
	data := FollowupData{Question: str(args, "question")}
	if res != nil {
		if q, ok := res.Data["question"]; ok {
			var qq struct {
				Text        string `json:"text"`
				Suggestions []struct {
					Text string `json:"text"`
					Mode string `json:"mode"`
				} `json:"suggestions"`
			}
			b, _ := json.Marshal(q)
			if json.Unmarshal(b, &qq) == nil {
				data.Question = qq.Text
				for _, s := range qq.Suggestions {
					data.Suggest = append(data.Suggest, SuggestionItem{Answer: s.Text, Mode: s.Mode})
				}
			}
		}
	}
	t.mistakes = 0
	// With followup auto-approved, the first suggestion answers when the
	// person has not within the timeout.
	actx := ctx
	if t.opts.AutoApprove.Allows(GroupFollowup) && len(data.Suggest) > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, t.opts.FollowupTimeout)
		defer cancel()
	}
	a, err := t.ask(actx, AskFollowup, mustJSON(data))
	if err != nil && ctx.Err() == nil && actx.Err() != nil {
		a, err = Answer{Response: YesButtonClicked}, nil
	}
	if err != nil {
		return nil, "", "", err
	}
	answer := a.Text
	if a.Response == YesButtonClicked && answer == "" && len(data.Suggest) > 0 {
		answer = data.Suggest[0].Answer
	}
	t.say(SayUserFeedback, answer)
	return []provider.Block{toolResult(u.ID, "<answer>\n"+answer+"\n</answer>", false)}, "", "", nil
}

func (p *presenter) completion(ctx context.Context, u provider.Block, args map[string]json.RawMessage) ([]provider.Block, Outcome, string, error) {
	t := p.t
	if _, err := t.opts.Runtime.DispatchApproved(ctx, p.call(u), nil); err != nil {
		var pe *engine.PostError
		if !errors.As(err, &pe) {
			return p.refused(u, err), "", "", nil
		}
	}
	t.mistakes = 0
	result := str(args, "result")
	t.say(SayCompletionResult, result)
	// As the reference does, the task reports itself completed as soon as
	// it presents its result, before the person answers the result's ask:
	// an unattended client (IPC) learns the task is done and can close it.
	t.emitCompleted()
	if t.opts.ParentID != "" {
		// A subtask's completion goes to its parent, which resumes.
		t.completed = true
		t.save()
		return []provider.Block{toolResult(u.ID, "The result was returned to the parent task.", false)}, Completed, result, nil
	}
	a, err := t.ask(ctx, AskCompletionResult, "")
	if err != nil {
		return nil, "", "", err
	}
	if a.Response == YesButtonClicked && a.Text == "" {
		t.completed = true
		t.save()
		return []provider.Block{toolResult(u.ID, "The user accepted the result.", false)}, Completed, result, nil
	}
	if a.Response == NoButtonClicked && a.Text == "" {
		return []provider.Block{toolResult(u.ID, "The user did not accept the result.", false)}, Failed, "", nil
	}
	t.say(SayUserFeedback, a.Text)
	return []provider.Block{toolResult(u.ID, "The user has provided feedback on the results. Consider their input to continue the task, and then attempt completion again.\n<feedback>\n"+a.Text+"\n</feedback>", false)}, "", "", nil
}

// subtask runs new_task as a child task in the requested mode; the parent
// waits and continues with the child's result.
func (p *presenter) subtask(ctx context.Context, u provider.Block, args map[string]json.RawMessage, approve engine.Approve, fb *string, rejected **rejection) ([]provider.Block, Outcome, string, error) {
	t := p.t
	_, err := t.opts.Runtime.DispatchApproved(ctx, p.call(u), approve)
	if *rejected != nil {
		return p.denied(u, *rejected), "", "", nil
	}
	if err != nil {
		var pe *engine.PostError
		switch {
		case ctx.Err() != nil && errors.Is(err, ctx.Err()):
			return nil, "", "", err
		case !errors.As(err, &pe):
			return p.refused(u, err), "", "", nil
		}
	}
	feedback := *fb
	mode := str(args, "mode")
	if mode == "" {
		mode = str(args, "mode_slug")
	}
	o := t.opts
	o.Mode, o.ParentID = mode, t.id
	child := New(str(args, "message"), o)
	t.mu.Lock()
	t.child = child
	t.mu.Unlock()
	t.emit(Event{Name: EventSpawned, State: t.State(), ChildID: child.id, Mode: mode})
	cres, err := child.Run(ctx)
	t.mu.Lock()
	t.child = nil
	t.mu.Unlock()
	if err != nil {
		return nil, "", "", err
	}
	cu := child.usage
	t.usage.TotalTokensIn += cu.TotalTokensIn
	t.usage.TotalTokensOut += cu.TotalTokensOut
	t.usage.TotalCacheWrites += cu.TotalCacheWrites
	t.usage.TotalCacheReads += cu.TotalCacheReads
	t.usage.TotalCost += cu.TotalCost
	if cres.Outcome != Completed {
		return p.fail(u, fmt.Sprintf("The subtask %s in %s mode ended without a result (%s).", child.id, mode, cres.Outcome), false), "", "", nil
	}
	t.mistakes = 0
	t.say(SaySubtaskResult, cres.Completion)
	out := fmt.Sprintf("Subtask %s in %s mode completed. Its result:\n<subtask_result>\n%s\n</subtask_result>", child.id, mode, cres.Completion)
	if feedback != "" {
		out += "\n\n<feedback>\n" + feedback + "\n</feedback>"
	}
	return []provider.Block{toolResult(u.ID, out, false)}, "", "", nil
}
