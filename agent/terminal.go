package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The terminal front of the approvals: how an ask is put to a person at a
// terminal, and how what they type becomes an answer. Keys: y approves, n
// rejects, "y: text" approves with feedback, any other text rejects with
// that text as feedback (or is the answer to a question); a number picks a
// suggested answer.

const rule = "────────────────────────────────────────────────────────────"

// RenderAsk writes the ask m as a terminal prompt: what the model wants to
// do (the diff of a file change, the command line), then the keys.
func RenderAsk(w io.Writer, m Message) {
	fmt.Fprintln(w, rule)
	keys := "[y] approve   [n] reject   [y: text] approve with feedback   or type feedback to reject with it"
	switch m.Ask {
	case AskCommand:
		fmt.Fprintln(w, "The model wants to run this command:")
		fmt.Fprintln(w, "  $ "+strings.ReplaceAll(m.Text, "\n", "\n    "))
	case AskCommandOutput:
		fmt.Fprintln(w, "The command is still running.")
		keys = "[y] let it keep running while the model goes on   [n] abort it   or type feedback: it keeps running and the model reads it"
	case AskTool:
		var st SayTool
		_ = json.Unmarshal([]byte(m.Text), &st)
		switch {
		case st.Tool == ToolNewTask:
			var d TaskCreationData
			_ = json.Unmarshal([]byte(m.Text), &d)
			fmt.Fprintf(w, "The model wants to start a subtask in %s mode:\n%s\n", d.Mode, indent(d.Content))
		case st.Tool == ToolSwitchMode:
			var d ModeSwitchData
			_ = json.Unmarshal([]byte(m.Text), &d)
			fmt.Fprintf(w, "The model wants to switch to %s mode: %s\n", d.Mode, d.Reason)
		default:
			fmt.Fprintf(w, "The model wants to %s %s\n", toolVerb(st.Tool), st.Path)
			switch {
			case st.Diff != "":
				fmt.Fprintln(w, strings.TrimRight(st.Diff, "\n"))
			case st.Content != "":
				fmt.Fprintln(w, indent(st.Content))
			case st.Search != "":
				fmt.Fprintf(w, "  replace: %s\n  with:    %s\n", st.Search, st.Replace)
			case st.Regex != "":
				fmt.Fprintf(w, "  regex: %s  files: %s\n", st.Regex, st.FilePattern)
			}
		}
	case AskFollowup:
		var f FollowupData
		_ = json.Unmarshal([]byte(m.Text), &f)
		fmt.Fprintf(w, "The model asks: %s\n", f.Question)
		for i, s := range f.Suggest {
			fmt.Fprintf(w, "  %d. %s\n", i+1, s.Answer)
		}
		keys = "type your answer"
		if len(f.Suggest) > 0 {
			keys = "type a number to pick an answer, or your own answer"
		}
	case AskCompletionResult:
		fmt.Fprintln(w, "The model says the task is complete (the result is above).")
		keys = "[y] accept   [n] end without accepting   or type feedback to go on"
	case AskAutoApprovalMaxReqReached:
		fmt.Fprintf(w, "The limit of auto-approved requests was reached (%s).\n", m.Text)
		keys = "[y] go on   [n] stop"
	case AskMistakeLimitReached:
		fmt.Fprintln(w, "The model made several mistakes in a row: "+m.Text)
		keys = "[y] go on   [n] stop   or type guidance for the model"
	case AskAPIReqFailed:
		fmt.Fprintln(w, "The model API request failed: "+m.Text)
		keys = "[y] retry   [n] end"
	case AskResumeTask, AskResumeCompletedTask:
		fmt.Fprintln(w, "Resume this task?")
		keys = "[y] resume   [n] end   or type new instructions"
	default:
		fmt.Fprintf(w, "%s %s\n", m.Ask, m.Text)
	}
	fmt.Fprintln(w, rule)
	fmt.Fprintln(w, keys)
	fmt.Fprint(w, "> ")
}

func toolVerb(tool string) string {
	switch tool {
	case ToolNewFileCreated:
		return "create"
	case ToolEditedExistingFile, ToolAppliedDiff, ToolInsertContent, ToolSearchAndReplace:
		return "change"
	case ToolReadFile:
		return "read"
	case ToolListFilesTopLevel, ToolListFilesRecursive:
		return "list"
	case ToolSearchFiles:
		return "search"
	}
	return "use " + tool + " on"
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}

// ParseTerminalAnswer turns a line typed at the prompt of ask into an
// answer. A line starting with "{" is a JSON answer, as on a pipe.
func ParseTerminalAnswer(ask Message, line string) (Answer, error) {
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "{") {
		return ParseAnswer([]byte(line))
	}
	if ask.Ask == AskFollowup {
		var f FollowupData
		_ = json.Unmarshal([]byte(ask.Text), &f)
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(f.Suggest) {
			return Answer{Response: MessageResponse, Text: f.Suggest[n-1].Answer}, nil
		}
		return Answer{Response: MessageResponse, Text: line}, nil
	}
	switch low := strings.ToLower(line); {
	case low == "y" || low == "yes":
		return Answer{Response: YesButtonClicked}, nil
	case low == "n" || low == "no":
		return Answer{Response: NoButtonClicked}, nil
	case strings.HasPrefix(low, "y:"):
		return Answer{Response: YesButtonClicked, Text: strings.TrimSpace(line[2:])}, nil
	}
	return Answer{Response: MessageResponse, Text: line}, nil
}

// unifiedDiff is a unified diff of before and after with one hunk: the
// lines between the common beginning and the common end, with up to three
// lines of context.
func unifiedDiff(path, before, after string) string {
	a, b := splitLines(before), splitLines(after)
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	if p == len(a) && p == len(b) {
		return ""
	}
	const ctx = 3
	from := max(p-ctx, 0)
	toA, toB := min(len(a)-s+ctx, len(a)), min(len(b)-s+ctx, len(b))
	var w strings.Builder
	fmt.Fprintf(&w, "--- %s\n+++ %s\n@@ -%s +%s @@\n", path, path, hunkRange(from, toA-from), hunkRange(from, toB-from))
	for _, l := range a[from:p] {
		w.WriteString(" " + l + "\n")
	}
	for _, l := range a[p : len(a)-s] {
		w.WriteString("-" + l + "\n")
	}
	for _, l := range b[p : len(b)-s] {
		w.WriteString("+" + l + "\n")
	}
	for _, l := range a[len(a)-s : toA] {
		w.WriteString(" " + l + "\n")
	}
	return w.String()
}

func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return strconv.Itoa(start + 1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
