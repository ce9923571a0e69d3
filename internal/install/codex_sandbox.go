package install

import (
	"fmt"
	"strings"
)

// Codex's own sandbox (developers.openai.com/codex/agent-approvals-security,
// codex-rs config): install turns it on in the project's .codex/config.toml,
// which Codex reads for a trusted project and which overrides the user's
// ~/.codex/config.toml:
//
//	sandbox_mode = "workspace-write"   commands may write only the workspace
//	                                   (and temp); .git and .codex read-only
//	approval_policy = "never"          no command is ever re-run outside the
//	                                   sandbox (the escalation hatch closed)
//
// Network stays as workspace-write has it (off), unless the person turned it
// on. The keys are top-level ones, so they go in a marked block at the very
// top of the file, before any table; uninstall cuts exactly that block out.
// A key the person set themselves is left alone and reported; a file that
// selects a permission profile (default_permissions) gets no sandbox_mode,
// which would override the profile.
const (
	codexSandboxBegin = "# >>> intentgate sandbox (added by `intentgate install codex`; `intentgate uninstall codex` removes this block)"
	codexSandboxEnd   = "# <<< intentgate sandbox"
)

var codexSandboxKeys = [][2]string{
	{"sandbox_mode", `"workspace-write"`},
	{"approval_policy", `"never"`},
}

// cutCodexSandbox removes install's sandbox block from data.
func cutCodexSandbox(data string) (string, bool) {
	i := strings.Index(data, codexSandboxBegin)
	if i < 0 || (i > 0 && data[i-1] != '\n') {
		return data, false
	}
	j := strings.Index(data[i:], "\n"+codexSandboxEnd+"\n")
	if j < 0 {
		return data, false
	}
	end := i + j + len("\n"+codexSandboxEnd+"\n")
	if end < len(data) && data[end] == '\n' {
		end++ // the blank line install put after the block
	}
	return data[:i] + data[end:], true
}

// codexSandbox changes the planned edit of config.toml at path: on install
// it puts the sandbox block at the top, on uninstall it cuts it out.
func (p *installPlan) codexSandbox(path string, remove bool) error {
	idx := -1
	for i, e := range p.edits {
		if e.path == path {
			idx = i
		}
	}
	if idx < 0 {
		return nil
	}
	e := &p.edits[idx]
	cur := ""
	if e.keep {
		cur = string(e.after)
	}
	rest, had := cutCodexSandbox(cur)
	if remove {
		if had {
			e.after, e.keep = []byte(rest), rest != ""
		}
		return nil
	}
	doc, err := parseTOML(path, rest)
	if err != nil {
		return err
	}
	var lines, own []string
	for _, kv := range codexSandboxKeys {
		if v, ok := doc[kv[0]]; ok {
			own = append(own, fmt.Sprintf("%s = %q", kv[0], fmt.Sprint(v)))
			continue
		}
		if kv[0] == "sandbox_mode" {
			if prof, ok := doc["default_permissions"]; ok {
				own = append(own, fmt.Sprintf("default_permissions = %q (a permission profile; sandbox_mode would override it)", fmt.Sprint(prof)))
				continue
			}
		}
		lines = append(lines, kv[0]+" = "+kv[1])
	}
	if len(own) > 0 {
		p.notes = append(p.notes, fmt.Sprintf("Codex: %s sets %s itself; install left it as it is, so Codex's sandbox is as that says", e.show, strings.Join(own, ", ")))
	}
	if len(lines) == 0 {
		e.after, e.keep = []byte(rest), rest != "" || e.exists
		return nil
	}
	next := codexSandboxBegin + "\n" + strings.Join(lines, "\n") + "\n" + codexSandboxEnd + "\n\n" + rest
	if _, err := parseTOML(path, next); err != nil {
		return fmt.Errorf("turning on Codex's sandbox would break %s (%v); set %s at the top of it by hand", path, err, strings.Join(lines, " and "))
	}
	e.after, e.keep = []byte(next), true
	return nil
}

// withGeminiHooksOn adds to the Gemini CLI settings edit the one switch that
// would turn every hook off: hooksConfig.enabled, whose default has changed
// between versions and which a person's ~/.gemini/settings.json may set to
// false. The project's settings override the user's, so install sets it true
// there when the file does not say; uninstall takes back exactly that.
//
// Gemini CLI's own sandboxes are not turned on. The container sandbox
// (tools.sandbox: docker, podman) runs Gemini, and so its hooks, in an image
// that has no intentgate, and its macOS Seatbelt profile cannot host the
// Seatbelt profile intentgate exec applies; the tool sandbox
// (security.toolSandboxing) is experimental. Each shell command runs under
// intentgate exec instead, confined to the intent's scope.
func withGeminiHooksOn(global bool, edit jsonEdit) jsonEdit {
	return func(doc *jnode, remove bool) (bool, string, error) {
		changed, note, err := edit(doc, remove)
		if err != nil || global {
			return changed, note, err
		}
		hc := doc.get("hooksConfig")
		if hc != nil && hc.kind != '{' {
			return changed, note, fmt.Errorf(`"hooksConfig" is not an object`)
		}
		on := jvalue(true)
		if remove {
			if hc != nil {
				if v := hc.get("enabled"); v != nil && v.equal(on) {
					hc.del("enabled")
					if len(hc.keys) == 0 {
						doc.del("hooksConfig")
					}
					changed = true
				}
			}
			return changed, note, nil
		}
		if hc == nil {
			hc = jobject()
			doc.set("hooksConfig", hc)
		}
		switch v := hc.get("enabled"); {
		case v == nil:
			hc.set("enabled", on)
			changed = true
		case !v.equal(on):
			return changed, note, fmt.Errorf(`"hooksConfig": {"enabled": false} turns every hook off, intentgate's included; remove it, then install again`)
		}
		return changed, joinNotes(note, geminiSandboxNote), nil
	}
}

const geminiSandboxNote = "Gemini CLI: hooks are on for the project (hooksConfig.enabled) and every run_shell_command runs under intentgate exec; " +
	"Gemini's own sandbox is left off (its container would hide intentgate from the hooks); not guaranteed: " +
	"hooksConfig.disabled in the user's settings can still name intentgate's hook, and the user's own ! shell commands are not hooked"
