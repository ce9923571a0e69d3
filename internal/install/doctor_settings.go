package install

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// What doctor checks in the agents' own settings, beyond the hook command:
// that every hook install writes is there for its event, and that the
// settings that confine the agent's shell or switch its hooks off say what
// install made them say. Each function returns the problems it found.

// readJSONDoc reads a JSON (or JSON with comments) settings file; a missing
// file is an empty document.
func readJSONDoc(path string) (*jnode, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) || (err == nil && len(strings.TrimSpace(string(data))) == 0) {
		return jobject(), nil
	}
	if err != nil {
		return nil, err
	}
	doc, err := parseJSONDoc(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if doc.kind != '{' {
		return nil, fmt.Errorf("%s does not hold a JSON object", path)
	}
	return doc, nil
}

// hookEventsIn lists the events of a Claude-shaped "hooks" object (grouped:
// event -> matcher groups -> handlers; else event -> handlers, Cursor's) that
// run intentgate's hook for agent, with the matcher each one has.
func hookEventsIn(doc *jnode, agent string, grouped bool) map[string]string {
	found := map[string]string{}
	hooks := doc.get("hooks")
	if hooks == nil || hooks.kind != '{' {
		return found
	}
	ours := func(h *jnode) bool {
		c, ok := h.get("command").str()
		return ok && strings.Contains(c, " hook "+agent)
	}
	for i, event := range hooks.keys {
		arr := hooks.vals[i]
		if arr.kind != '[' {
			continue
		}
		for _, g := range arr.vals {
			matcher, _ := g.get("matcher").str()
			if !grouped {
				if ours(g) {
					found[event] = matcher
				}
				continue
			}
			hs := g.get("hooks")
			if hs == nil || hs.kind != '[' {
				continue
			}
			for _, h := range hs.vals {
				if ours(h) {
					found[event] = matcher
				}
			}
		}
	}
	return found
}

// missingHooks compares the events install writes with those found.
func missingHooks(file string, found map[string]string, specs []hookSpec) []string {
	var out []string
	for _, s := range specs {
		m, ok := found[s.event]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s has no intentgate hook for %s: run install again", file, s.event))
		case s.matcher != "" && m != s.matcher:
			out = append(out, fmt.Sprintf("%s: intentgate's %s hook matches %q, not %q: tools outside it are not checked; run install again", file, s.event, m, s.matcher))
		}
	}
	return out
}

func claudeSettings(ws, home string) []string {
	path := filepath.Join(ws, ".claude", "settings.json")
	doc, err := readJSONDoc(path)
	if err != nil {
		return []string{err.Error()}
	}
	out := missingHooks(".claude/settings.json", hookEventsIn(doc, "claude-code", true), claudeSpecs)
	sb := doc.get("sandbox")
	want := map[string]bool{"enabled": true, "failIfUnavailable": true, "allowUnsandboxedCommands": false}
	for _, k := range []string{"enabled", "failIfUnavailable", "allowUnsandboxedCommands"} {
		if v := sb.get(k); v == nil || !v.equal(jvalue(want[k])) {
			out = append(out, fmt.Sprintf(".claude/settings.json: sandbox.%s is not %v: Claude Code's own sandbox is not as install set it; run install again", k, want[k]))
		}
	}
	var deny []string
	if dw := sb.get("filesystem").get("denyWrite"); dw != nil && dw.kind == '[' {
		for _, item := range dw.vals {
			if s, ok := item.str(); ok {
				deny = append(deny, s)
			}
		}
	}
	for _, p := range claudeDenyWrite(ws) {
		if !slices.Contains(deny, p) {
			out = append(out, fmt.Sprintf(".claude/settings.json: sandbox.filesystem.denyWrite lacks %s: run install again", p))
		}
	}
	if runtime.GOOS == "linux" {
		for _, tool := range []string{"bwrap", "socat"} {
			if _, err := exec.LookPath(tool); err != nil {
				out = append(out, fmt.Sprintf("%s is not on PATH: Claude Code's sandbox cannot start on Linux without bubblewrap and socat (failIfUnavailable then stops every command)", tool))
			}
		}
	}
	return out
}

func codexSettings(ws, home string) []string {
	doc, err := readJSONDoc(filepath.Join(ws, ".codex", "hooks.json"))
	if err != nil {
		return []string{err.Error()}
	}
	out := missingHooks(".codex/hooks.json", hookEventsIn(doc, "codex", true), codexSpecs)
	path := filepath.Join(ws, ".codex", "config.toml")
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return append(out, err.Error())
	}
	cfg, err := parseTOML(path, string(data))
	if err != nil {
		return append(out, err.Error())
	}
	mode, _ := cfg["sandbox_mode"].(string)
	_, profile := cfg["default_permissions"]
	switch {
	case mode == "workspace-write" || mode == "read-only":
	case mode == "" && profile:
		// A permission profile of the person's own decides; install left it.
	case mode == "":
		out = append(out, `.codex/config.toml sets no sandbox_mode: Codex's shell is not sandboxed by its own settings; run install again`)
	default:
		out = append(out, fmt.Sprintf(".codex/config.toml: sandbox_mode = %q: Codex's own sandbox does not confine the shell", mode))
	}
	if ap, _ := cfg["approval_policy"].(string); ap != "never" {
		out = append(out, fmt.Sprintf(`.codex/config.toml: approval_policy = %q, not "never": a command Codex's sandbox refuses can be re-run outside it`, ap))
	}
	return append(out, codexSetup(ws, home)...)
}

func geminiSettings(ws, home string) []string {
	doc, err := readJSONDoc(filepath.Join(ws, ".gemini", "settings.json"))
	if err != nil {
		return []string{err.Error()}
	}
	out := missingHooks(".gemini/settings.json", hookEventsIn(doc, "gemini", true), geminiSpecs)
	if v := doc.get("hooksConfig").get("enabled"); v == nil || !v.equal(jvalue(true)) {
		out = append(out, `.gemini/settings.json: hooksConfig.enabled is not true: Gemini CLI may run no hook at all; run install again`)
	}
	user, err := readJSONDoc(filepath.Join(home, ".gemini", "settings.json"))
	if err != nil {
		return append(out, err.Error())
	}
	if dis := user.get("hooksConfig").get("disabled"); dis != nil && dis.kind == '[' {
		for _, item := range dis.vals {
			if s, _ := item.str(); s == "intentgate" || strings.Contains(s, " hook gemini") {
				out = append(out, fmt.Sprintf("~/.gemini/settings.json: hooksConfig.disabled names %q: Gemini CLI skips intentgate's hook; remove it", s))
			}
		}
	}
	if v := user.get("hooksConfig").get("enabled"); v != nil && v.equal(jvalue(false)) && doc.get("hooksConfig").get("enabled") == nil {
		out = append(out, "~/.gemini/settings.json turns hooks off and the project does not turn them on")
	}
	return append(out, geminiSetup(ws, home)...)
}

func clineSettings(ws, home string) []string {
	var out []string
	for _, ev := range clineEvents {
		b, err := os.ReadFile(filepath.Join(ws, ".clinerules", "hooks", ev))
		if err != nil || !strings.Contains(string(b), clineMarker) {
			out = append(out, fmt.Sprintf(".clinerules/hooks/%s is not intentgate's: run install again", ev))
		}
	}
	return out
}
