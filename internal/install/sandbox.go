package install

import (
	"fmt"
	"path/filepath"

	"github.com/intentgate/intentgate/internal/sandbox"
)

// withClaudeSandbox adds to a Claude Code settings edit the settings of
// Claude Code's own sandbox (code.claude.com/docs/en/sandboxing): on, no
// unsandboxed run when it cannot start (failIfUnavailable), no unsandboxed
// retry (allowUnsandboxedCommands: false), and every governance path of the
// workspace in filesystem.denyWrite ("//" starts an absolute path there).
// Uninstall takes back exactly what install set.
func withClaudeSandbox(root string, global bool, edit jsonEdit) jsonEdit {
	return func(doc *jnode, remove bool) (bool, string, error) {
		changed, note, err := edit(doc, remove)
		if err != nil || global {
			return changed, note, err
		}
		c2, n2, err := claudeSandboxEdit(doc, root, remove)
		if n2 != "" {
			note = joinNotes(note, n2)
		}
		return changed || c2, note, err
	}
}

func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// claudeDenyWrite are the governance paths for Claude Code's denyWrite.
// Not .claude/ itself: Claude's sandbox mounts its own protections inside it
// (.claude/commands...) and fails to start when it is read-only; its settings
// files are named instead.
func claudeDenyWrite(root string) []string {
	var out []string
	for _, g := range sandbox.GovernanceNames {
		if g == ".claude" {
			for _, f := range []string{"settings.json", "settings.local.json"} {
				out = append(out, "/"+filepath.ToSlash(filepath.Join(root, g, f)))
			}
			continue
		}
		out = append(out, "/"+filepath.ToSlash(filepath.Join(root, g)))
	}
	return out
}

func claudeSandboxEdit(doc *jnode, root string, remove bool) (bool, string, error) {
	sb := doc.get("sandbox")
	if sb != nil && sb.kind != '{' {
		return false, "", fmt.Errorf(`"sandbox" is not an object`)
	}
	deny := claudeDenyWrite(root)
	flags := map[string]bool{"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false}
	order := []string{"enabled", "failIfUnavailable", "allowUnsandboxedCommands"}
	if remove {
		if sb == nil {
			return false, "", nil
		}
		changed := false
		for _, k := range order {
			if v := sb.get(k); v != nil && v.equal(jvalue(flags[k])) {
				sb.del(k)
				changed = true
			}
		}
		if fs := sb.get("filesystem"); fs != nil && fs.kind == '{' {
			if dw := fs.get("denyWrite"); dw != nil && dw.kind == '[' {
				var keep []*jnode
				for _, item := range dw.vals {
					s, _ := item.str()
					if !contains(deny, s) {
						keep = append(keep, item)
					}
				}
				if len(keep) != len(dw.vals) {
					changed = true
					if len(keep) == 0 {
						fs.del("denyWrite")
					} else {
						dw.setItems(keep)
					}
				}
			}
			if len(fs.keys) == 0 {
				sb.del("filesystem")
			}
		}
		if len(sb.keys) == 0 {
			doc.del("sandbox")
		}
		return changed, "", nil
	}
	if sb == nil {
		sb = jobject()
		doc.set("sandbox", sb)
	}
	changed := false
	var notes []string
	for _, k := range order {
		if v := sb.get(k); v == nil || !v.equal(jvalue(flags[k])) {
			sb.set(k, jvalue(flags[k]))
			changed = true
		}
	}
	if ex := sb.get("excludedCommands"); ex != nil && ex.kind == '[' && len(ex.vals) > 0 {
		notes = append(notes, "Claude Code: sandbox.excludedCommands run outside Claude's sandbox (they still run under intentgate exec)")
	}
	fs := sb.get("filesystem")
	if fs == nil || fs.kind != '{' {
		fs = jobject()
		sb.set("filesystem", fs)
	}
	dw := fs.get("denyWrite")
	if dw == nil || dw.kind != '[' {
		dw = jarray()
		fs.set("denyWrite", dw)
	}
	for _, p := range deny {
		found := false
		for _, item := range dw.vals {
			if s, _ := item.str(); s == p {
				found = true
			}
		}
		if !found {
			dw.push(jvalue(p))
			changed = true
		}
	}
	notes = append(notes, "Claude Code: its own sandbox is on (sandbox.enabled, failIfUnavailable, no unsandboxed retry, governance paths in filesystem.denyWrite); "+
		"not guaranteed: a user's own ! shell commands and settings in .claude/settings.local.json or ~/.claude are outside what install controls, "+
		"and on Linux Claude's sandbox needs bubblewrap and socat installed")
	return changed, joinAll(notes), nil
}

func joinAll(notes []string) string {
	out := ""
	for _, n := range notes {
		out = joinNotes(out, n)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The agents' sandbox notes say how their shell commands are confined and
// what install cannot guarantee.
const (
	codexSandboxNote = "Codex: every shell command runs under intentgate exec (its PreToolUse hook rewrites it), inside Codex's own sandbox " +
		`(sandbox_mode = "workspace-write", approval_policy = "never" in .codex/config.toml); ` +
		"not guaranteed: Codex reads .codex/config.toml only for a trusted project, command-line flags (--sandbox, " +
		"--dangerously-bypass-approvals-and-sandbox) override it, Codex's sandbox itself leaves .orchestration/ writable " +
		"(intentgate exec does not), and a structured (argv or PowerShell) command is refused rather than rewritten"
	cursorSandboxNote = "Cursor: its hooks, as documented, cannot rewrite a shell command and install configures no sandbox for it: commands run unconfined; " +
		"a governance file a command changed is restored and recorded as a violation when afterShellExecution comes, " +
		"and Cursor has no field to tell the model"
	clineSandboxNote = "Cline: with Cline 3 (the cline CLI) every run_commands runs under intentgate exec (overrideInput); " +
		"the older Cline hooks cannot rewrite a command, so there it runs unconfined, and a governance file it changed is restored " +
		"and recorded as a violation after it ran; Cline has no sandbox of its own"
)
