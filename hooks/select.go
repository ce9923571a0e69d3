package hooks

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/orchestration"
)

// historyWindow is how much of the ledger's end select_active_intent reads for
// an intent's recent history: bounded, so selecting stays fast on old ledgers.
const historyWindow = 256 << 10

// SelectActiveIntent is the select_active_intent(intent_id) tool. It sets the
// session's intent and answers with an <intent_context> block: the intent's
// name, constraints, owned_scope, acceptance criteria and recent history.
// The choice is written at the end of the call by the SessionWriter of the
// same store, so the engine running it must have one (gate.Open wires it).
func SelectActiveIntent(intents Intents, sessions *orchestration.SessionStore, orchDir string) engine.Tool {
	return engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
		id, err := c.Require("intent_id")
		if err != nil {
			return nil, err
		}
		id = strings.TrimSpace(id)
		if c.Session == "" {
			return nil, &engine.Denial{Code: engine.MissingParameter, Parameter: "session",
				Message: "select_active_intent needs a session id to remember the choice",
				Hint:    "send a session id with every call"}
		}
		set, err := intents.Current()
		if err != nil {
			return nil, &engine.Denial{Code: engine.HookError, Intent: id,
				Message: "the intents cannot be loaded: " + err.Error(),
				Hint:    "ask a person to fix .orchestration/active_intents.yaml"}
		}
		in, ok := set.Get(id)
		if !ok {
			return nil, &engine.Denial{Code: engine.UnknownIntent, Intent: id,
				Message: fmt.Sprintf("no intent %q is declared in .orchestration/active_intents.yaml", id),
				Hint:    "choose one of: " + inProgressIDs(set)}
		}
		if in.Status != orchestration.StatusInProgress {
			return nil, &engine.Denial{Code: engine.IntentNotActive, Intent: id,
				Message: fmt.Sprintf("intent %s is %s; only IN_PROGRESS intents can be selected", id, in.Status),
				Hint:    "choose one of: " + inProgressIDs(set)}
		}
		// Written durably with the call's other session changes, once, at
		// its end (SessionWriter). Losing it refuses the next write
		// (NO_ACTIVE_INTENT); it never allows one.
		laterSessionDurable(c, sessions, func(s *orchestration.Session) error {
			s.Intent = in.ID
			return nil
		})
		c.Intent = in.ID
		hist := recentHistory(filepath.Join(orchDir, "agent_trace.jsonl"), in.ID, 10)
		return &engine.Result{Output: intentContext(in, hist), Data: map[string]any{"intent": in.ID}}, nil
	})
}

func intentContext(in *orchestration.Intent, hist []string) string {
	var b strings.Builder
	e := html.EscapeString
	fmt.Fprintf(&b, "<intent_context>\n<intent id=\"%s\" status=\"%s\">\n<name>%s</name>\n", e(in.ID), e(string(in.Status)), e(in.Name))
	list := func(tag string, items []string, empty string) {
		fmt.Fprintf(&b, "<%s>\n", tag)
		if len(items) == 0 && empty != "" {
			fmt.Fprintf(&b, "%s\n", empty)
		}
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", e(it))
		}
		fmt.Fprintf(&b, "</%s>\n", tag)
	}
	list("owned_scope", in.OwnedScope, "")
	list("constraints", in.Constraints, "(none)")
	list("acceptance_criteria", in.AcceptanceCriteria, "(none)")
	list("recent_history", hist, "(no changes recorded under this intent yet)")
	b.WriteString("</intent>\n")
	b.WriteString("You may now change only files matching owned_scope. Read a file before you overwrite it.\n")
	b.WriteString("</intent_context>")
	return b.String()
}

// recentHistory returns up to n one-line summaries of the newest records of
// intent id found in the ledger's last historyWindow bytes.
func recentHistory(ledger, id string, n int) []string {
	f, err := os.Open(ledger)
	if err != nil {
		return nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	off := max(fi.Size()-historyWindow, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return nil
	}
	lines := bytes.Split(buf, []byte("\n"))
	if off > 0 && len(lines) > 0 {
		lines = lines[1:] // partial first line
	}
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if len(bytes.TrimSpace(lines[i])) == 0 {
			continue
		}
		rec, err := orchestration.ParseRecord(lines[i])
		if err != nil || rec.Intent() != id || rec.Meta == nil {
			continue
		}
		out = append(out, summarize(rec))
	}
	// Oldest first reads like a story.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func summarize(rec *orchestration.Record) string {
	m := rec.Meta
	var paths []string
	for _, f := range rec.Files {
		var rs []string
		for _, cv := range f.Conversations {
			for _, r := range cv.Ranges {
				if r.StartLine == r.EndLine {
					rs = append(rs, fmt.Sprint(r.StartLine))
				} else {
					rs = append(rs, fmt.Sprintf("%d-%d", r.StartLine, r.EndLine))
				}
			}
		}
		p := f.Path
		if len(rs) > 0 {
			p += " lines " + strings.Join(rs, ",")
		}
		paths = append(paths, p)
	}
	return fmt.Sprintf("%s %s %s %s %s", rec.Timestamp.Format(time.RFC3339), m.Decision, m.Tool, m.Mutation, strings.Join(paths, "; "))
}
