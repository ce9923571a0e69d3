// Package adapter is the external-agent runtime: it answers the hook events
// of coding agents that run their tools themselves (Claude Code, Codex,
// Gemini CLI, Cursor, Cline) by putting each through the governed runtime
// of package gate, and answers in the agent's own dialect. `intentgate hook
// AGENT` (one process per event) and `intentgate serve` (a daemon, over
// HTTP or a socket) both call Handler.Handle, so an event gets the same
// answer and leaves the same records whichever way it arrives.
//
// An event goes through three steps:
//
//	agent's JSON --Dialect.Parse--> Event (neutral: Kind, Session, Ops...)
//	Event --Handler--> gate.Runtime.Authorize / Observe / Dispatch --> Reply
//	Reply --Dialect.Render--> agent's JSON, exit status
//
// Only the first and last step differ between agents, and they live in the
// agent's dialect file: claude.go (Claude Code and Codex), gemini.go,
// cursor.go, cline.go. Adding a sixth agent is one new file with a type
// implementing Dialect, and one line in the agents table of dialect.go:
//
//	{"newagent", newagent{}, "NEWAGENT_PROJECT_DIR"},
//
// The adapter holds no policy: what an operation may do is decided by the
// runtime's policies, and what a shell command changed is judged by the
// runtime (Runtime.Picture before it, Runtime.ObserveCommand after it). What
// a pre-tool event must leave for its post event, which another process may
// handle, is kept in the session (state.go).
package adapter
