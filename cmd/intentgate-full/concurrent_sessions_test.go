package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// Two Claude Code sessions on one workspace: while session A's Bash command
// runs, session B edits a file through its own Edit tool. The command's
// picture from before it and the workspace after it differ in B's file too;
// the ledger says B made that change.

const concurrentIntents = `active_intents:
  - id: INT-001
    name: app
    status: IN_PROGRESS
    owned_scope: ["src/**"]
  - id: INT-002
    name: lib
    status: IN_PROGRESS
    owned_scope: ["lib/**"]
`

const otherSession = "0b9e51a4-2f0c-4c55-9a53-7f3d2b1c9e10"

// claudeEditAs has session edit rel from old to new through Claude Code's
// Read and Edit tools: the events the agent sends around its own change.
func claudeEditAs(t *testing.T, e *hookEnv, session, id, rel, old, new string) {
	t.Helper()
	base := map[string]any{"session_id": session, "tool_input.file_path": e.path(rel)}
	with := func(kv map[string]any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range kv {
			m[k] = v
		}
		return m
	}
	n := strings.Count(old, "\n")
	claudeAllowed(t, "B Read", e.send("PreToolUse-Read", with(map[string]any{"tool_use_id": id + "r"})))
	claudeAllowed(t, "B PostRead", e.send("PostToolUse-Read", with(map[string]any{"tool_use_id": id + "r",
		"tool_response.file.filePath": e.path(rel), "tool_response.file.content": old,
		"tool_response.file.numLines": n + 1, "tool_response.file.startLine": 1, "tool_response.file.totalLines": n + 1})))
	claudeAllowed(t, "B Edit", e.send("PreToolUse-Edit", with(map[string]any{"tool_use_id": id})))
	e.write(rel, new)
	claudeAllowed(t, "B PostEdit", e.send("PostToolUse-Edit", with(map[string]any{"tool_use_id": id,
		"tool_response.filePath": e.path(rel), "tool_response.originalFile": old})))
}

type claudePost struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	HSO      struct {
		Context string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

func decodePost(t *testing.T, out hookOut) claudePost {
	t.Helper()
	var p claudePost
	if strings.TrimSpace(out.stdout) == "" {
		return p
	}
	if err := json.Unmarshal([]byte(out.stdout), &p); err != nil {
		t.Fatalf("PostToolUse stdout %q: %v", out.stdout, err)
	}
	return p
}

func TestConcurrentSessionsCommandCredit(t *testing.T) {
	t.Parallel()
	e := &hookEnv{t: t, agent: "claude-code", ws: e2eWorkspace(t, concurrentIntents, map[string]string{
		"src/a.txt": "a\n", "lib/b.go": "b1\n",
	})}
	e.intentUse(claudeSession, "INT-001")
	e.intentUse(otherSession, "INT-002")

	// A's command starts; while it runs B edits lib/b.go (outside A's
	// scope) and the command writes src/a.txt (inside it).
	claudeRewritten(t, e, e.send("PreToolUse-Bash", map[string]any{"tool_use_id": "toolu_A"}))
	claudeEditAs(t, e, otherSession, "toolu_B", "lib/b.go", "b1\n", "b1\nb2\n")
	e.write("src/a.txt", "a\nA\n")
	p := decodePost(t, e.send("PostToolUse-Bash", map[string]any{"tool_use_id": "toolu_A"}))
	if p.Decision == "block" || strings.Contains(p.Reason+p.HSO.Context, "Undo") {
		t.Errorf("A's command was blamed for B's edit: %+v", p)
	}
	if !strings.Contains(p.HSO.Context, "lib/b.go") || !strings.Contains(p.HSO.Context, "other sessions") {
		t.Errorf("A's context %q, want lib/b.go named as another session's change", p.HSO.Context)
	}
	var aPaths []string
	for _, r := range e.ledger() {
		if r.Metadata.IG.Session == claudeSession {
			aPaths = append(aPaths, r.path())
		}
		if r.path() == "lib/b.go" && r.Metadata.IG.Session != otherSession {
			t.Errorf("lib/b.go recorded for session %s (%s %s), want only B's record", r.Metadata.IG.Session, r.Metadata.IG.Tool, r.Metadata.IG.Decision)
		}
	}
	if strings.Join(aPaths, ",") != "src/a.txt" {
		t.Errorf("A's records: %v, want only src/a.txt", aPaths)
	}
	b := traceBlame(t, e.ws, "lib/b.go")
	if len(b.Lines) != 2 || b.Lines[1].Record == nil || b.Lines[1].Record.Session != otherSession {
		t.Fatalf("blame lib/b.go: %+v, want line 2 credited to session B", b.Lines)
	}
	if r := b.Lines[1].Record; r.Tool == "execute_command" {
		t.Errorf("line 2 credited to %+v, want B's edit", r)
	}
}

func TestConcurrentSessionsAmbiguous(t *testing.T) {
	t.Parallel()
	e := &hookEnv{t: t, agent: "claude-code", ws: e2eWorkspace(t, concurrentIntents, map[string]string{
		"lib/c.go": "c1\n",
	})}
	e.intentUse(claudeSession, "INT-001")
	e.intentUse(otherSession, "INT-002")

	// A's command and B both change lib/c.go: first the command, then B
	// (who read the file with the command's line in it).
	claudeRewritten(t, e, e.send("PreToolUse-Bash", map[string]any{"tool_use_id": "toolu_A"}))
	e.write("lib/c.go", "c1\ncmd\n")
	claudeEditAs(t, e, otherSession, "toolu_B", "lib/c.go", "c1\ncmd\n", "c1\ncmd\nb\n")
	p := decodePost(t, e.send("PostToolUse-Bash", map[string]any{"tool_use_id": "toolu_A"}))
	if p.Decision == "block" || strings.Contains(p.Reason+p.HSO.Context, "Undo") {
		t.Errorf("an ambiguous change was judged as A's alone: %+v", p)
	}
	if !strings.Contains(p.HSO.Context, "ambiguous") || !strings.Contains(p.HSO.Context, "lib/c.go") {
		t.Errorf("A's context %q, want lib/c.go named as ambiguous", p.HSO.Context)
	}
	if got := e.read("lib/c.go"); got != "c1\ncmd\nb\n" {
		t.Errorf("lib/c.go = %q, want both changes kept", got)
	}
	r := e.lastRecord("lib/c.go")
	if ig := r.Metadata.IG; ig.Session != claudeSession || ig.Tool != "execute_command" || ig.Decision != "allow" ||
		!strings.Contains(ig.Ambiguous, otherSession) || ig.Before != sha("c1\n") || ig.After != sha("c1\ncmd\nb\n") {
		t.Errorf("A's record of lib/c.go: %+v, want an ambiguous change naming B, c1 -> now", ig)
	}
	b := traceBlame(t, e.ws, "lib/c.go")
	if len(b.Lines) != 3 {
		t.Fatalf("blame lib/c.go: %d lines", len(b.Lines))
	}
	for _, l := range b.Lines[1:] {
		if l.Record != nil || !strings.Contains(l.Reason, "cannot tell whose") {
			t.Errorf("blame line %d: %+v %q, want unattributed as ambiguous", l.Line, l.Record, l.Reason)
		}
	}
	if out, code := runIG(t, "trace", "verify", "-w", e.ws); code != 0 {
		t.Errorf("trace verify: exit %d\n%s", code, out)
	}
}
