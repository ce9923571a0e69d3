package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/intentgate/intentgate/internal/adapter"
	"github.com/intentgate/intentgate/internal/daemon"
	"github.com/intentgate/intentgate/internal/fsx"
)

// Options says where and how install (or uninstall) configures an agent.
type Options struct {
	Global    bool   // the user's settings instead of the workspace's
	DryRun    bool   // print the changes as a unified diff, write nothing
	Workspace string // the workspace directory
	Command   string // how the agent runs intentgate: a name on PATH or an absolute path
	Trust     bool   // codex: record the project's trust in the user's config
	Daemon    string // claude-code: the loopback address of `intentgate serve`

	// lean is how the agent runs intentgate-hook, the lean hook program,
	// found beside the intentgate of Command (leanHook); "" writes
	// "<Command> hook AGENT".
	lean string
}

// fileEdit is one file install changes.
type fileEdit struct {
	path   string // absolute
	show   string // as printed
	before []byte
	exists bool
	after  []byte
	keep   bool // false: the file is removed
	perm   fs.FileMode
}

func (e fileEdit) changed() bool {
	return e.exists != e.keep || (e.keep && !bytes.Equal(e.before, e.after))
}

// installPlan is what install or uninstall does for one agent.
type installPlan struct {
	edits []fileEdit
	notes []string
	// dirs are the directories install creates, innermost first; uninstall
	// removes them again when it leaves them empty.
	dirs []string
	// untrusted says why the agent would not run the hooks (Codex, a
	// project it does not trust) and what to run; install then fails.
	untrusted string
	// codexTrust, when set, asks Codex for the hashes of the hooks install
	// wrote and trusts them in the user's config (install codex --trust).
	codexTrust *codexHookTrust
}

// Install configures agent to send its hook events to `intentgate hook
// AGENT` and registers `intentgate mcp` with it, writing what it does (or,
// with DryRun, a unified diff) to out. It fails, before writing anything,
// when the agent would not be governed afterwards.
func Install(o Options, agent string, out io.Writer) error {
	return run(&o, agent, false, out)
}

// Uninstall removes exactly what Install added, restoring each file byte
// for byte where it still holds what Install wrote.
func Uninstall(o Options, agent string, out io.Writer) error {
	return run(&o, agent, true, out)
}

func run(o *Options, agent string, remove bool, out io.Writer) error {
	if !slices.Contains(Agents, agent) {
		return fmt.Errorf("unknown agent %q; use one of: %s", agent, strings.Join(Agents, ", "))
	}
	if _, ok := adapter.Lookup(agent); !ok {
		return fmt.Errorf("no hook dialect for %q", agent)
	}
	if strings.TrimSpace(o.Command) == "" {
		return errors.New("--command is empty")
	}
	if err := o.checkDaemon(agent); err != nil {
		return err
	}
	if !remove {
		if err := o.resolveCommand(out); err != nil {
			return err
		}
		o.lean = o.leanHook()
	}
	p, err := planInstall(o, agent, remove)
	if err != nil {
		return err
	}
	verb := "install"
	if remove {
		verb = "uninstall"
	}
	if p.untrusted != "" && !o.DryRun {
		return errors.New(p.untrusted)
	}
	statePath := p.statePath(agent)
	var st *installState
	if statePath != "" {
		if st, err = readInstallState(statePath); err != nil {
			return err
		}
		if remove {
			p.restoreInstalled(st)
		} else {
			p.noteInstalled(st)
			if !o.DryRun {
				if err := writeInstallState(statePath, st); err != nil {
					return fmt.Errorf("%s %s: %w", verb, agent, err)
				}
			}
		}
	}
	for _, e := range p.edits {
		if !e.changed() {
			fmt.Fprintf(out, "unchanged %s\n", e.show)
			continue
		}
		if o.DryRun {
			a, b := "a/"+e.show, "b/"+e.show
			if !e.exists {
				a = "/dev/null"
			}
			var after []byte
			if e.keep {
				after = e.after
			} else {
				b = "/dev/null"
			}
			fmt.Fprint(out, unifiedDiff(a, b, e.before, after))
			continue
		}
		if err := applyEdit(e); err != nil {
			return fmt.Errorf("%s %s: %w", verb, agent, err)
		}
		switch {
		case !e.keep:
			fmt.Fprintf(out, "removed %s\n", e.show)
		case !e.exists:
			fmt.Fprintf(out, "created %s\n", e.show)
		default:
			fmt.Fprintf(out, "updated %s\n", e.show)
		}
	}
	if remove && !o.DryRun {
		if st != nil {
			for _, e := range p.edits {
				delete(st.Files, e.path)
			}
			if err := writeInstallState(statePath, st); err != nil {
				return fmt.Errorf("%s %s: %w", verb, agent, err)
			}
		}
		for _, d := range p.dirs {
			// Only empty directories go, so nothing of the person's is lost.
			if err := os.Remove(d); err == nil {
				fmt.Fprintf(out, "removed %s\n", displayPath(o, d)+string(filepath.Separator))
			}
		}
	}
	if p.codexTrust != nil && !o.DryRun {
		if err := p.codexTrust.apply(st, statePath, out); err != nil {
			for _, n := range p.notes {
				fmt.Fprintf(out, "note: %s\n", n)
			}
			return fmt.Errorf("%s %s: %w", verb, agent, err)
		}
	}
	for _, n := range p.notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
	return nil
}

func applyEdit(e fileEdit) error {
	if !e.keep {
		if err := os.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(e.path), 0o755); err != nil {
		return err
	}
	perm := e.perm
	if fi, err := os.Stat(e.path); err == nil {
		perm = fi.Mode().Perm()
	}
	return fsx.WriteFile(e.path, e.after, perm)
}

func displayPath(o *Options, p string) string {
	if o.Global {
		if home, err := os.UserHomeDir(); err == nil {
			if rel, err := filepath.Rel(home, p); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(filepath.Join("~", rel))
			}
		}
		return p
	}
	if rel, err := filepath.Rel(o.Workspace, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// hookCommand is the command line an agent runs for its hook events:
// "intentgate-hook AGENT" where the lean hook program lies beside intentgate,
// "intentgate hook AGENT" otherwise. Both answer alike.
func (o *Options) hookCommand(agent string) string {
	c := shellQuote(o.Command) + " hook " + agent
	if o.lean != "" {
		c = shellQuote(o.lean) + " " + agent
	}
	if o.Global {
		c += " --only-governed"
	}
	return c
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// oursCommand recognizes the hook commands install writes for agent, with
// any intentgate binary: "<intentgate> hook <agent> [--only-governed]" and
// "<intentgate-hook> <agent> [--only-governed]".
func (o *Options) oursCommand(agent string) func(string) bool {
	return func(cmd string) bool {
		cmd = strings.TrimSuffix(strings.TrimSpace(cmd), " --only-governed")
		if bin, ok := strings.CutSuffix(cmd, " hook "+agent); ok {
			return isIntentgateBinary(o, bin)
		}
		if bin, ok := strings.CutSuffix(cmd, " "+agent); ok {
			return IsLeanHook(bin)
		}
		return false
	}
}

// LeanHookName is the lean hook program's name (with .exe on Windows).
const LeanHookName = "intentgate-hook"

// IsLeanHook reports whether bin, a command's first word as written (maybe
// quoted), names the lean hook program.
func IsLeanHook(bin string) bool {
	bin = strings.TrimSpace(bin)
	if len(bin) >= 2 && (bin[0] == '\'' || bin[0] == '"') && bin[len(bin)-1] == bin[0] {
		bin = bin[1 : len(bin)-1]
	}
	base := bin[strings.LastIndexAny(bin, `/\`)+1:]
	return strings.TrimSuffix(strings.ToLower(base), ".exe") == LeanHookName
}

// leanHook finds intentgate-hook beside the intentgate the hooks would run
// (Command, on PATH or absolute, as linked or where the link points): the
// same installation, so the same version. It returns the name when the
// agent finds that very file on PATH, its absolute path otherwise, and ""
// when there is none.
func (o *Options) leanHook() string {
	bin := o.Command
	if !filepath.IsAbs(bin) {
		p, err := exec.LookPath(bin)
		if err != nil {
			return ""
		}
		if bin, err = filepath.Abs(p); err != nil {
			return ""
		}
	}
	name := LeanHookName
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	dirs := []string{filepath.Dir(bin)}
	if real, err := filepath.EvalSymlinks(bin); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	for _, d := range dirs {
		lean := filepath.Join(d, name)
		fi, err := os.Stat(lean)
		if err != nil || fi.IsDir() || (runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0) {
			continue
		}
		if !filepath.IsAbs(o.Command) {
			if p, err := exec.LookPath(LeanHookName); err == nil {
				if pf, err := os.Stat(p); err == nil && os.SameFile(pf, fi) {
					return LeanHookName
				}
			}
		}
		return lean
	}
	return ""
}

func isIntentgateBinary(o *Options, bin string) bool {
	bin = strings.TrimSpace(bin)
	if len(bin) >= 2 && (bin[0] == '\'' || bin[0] == '"') && bin[len(bin)-1] == bin[0] {
		bin = bin[1 : len(bin)-1]
	}
	if bin == o.Command {
		return true
	}
	base := bin[strings.LastIndexAny(bin, `/\`)+1:]
	return strings.TrimSuffix(strings.ToLower(base), ".exe") == "intentgate"
}

func (o *Options) home() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("--global needs the home directory: %w", err)
	}
	return home, nil
}

func planInstall(o *Options, agent string, remove bool) (*installPlan, error) {
	root := o.Workspace
	if !o.Global {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", o.Workspace)
		}
		o.Workspace, root = abs, abs
	} else {
		home, err := o.home()
		if err != nil {
			return nil, err
		}
		root = home
	}
	p := &installPlan{}
	if err := dialects[agent].plan(p, o, root, remove); err != nil {
		return nil, err
	}
	if n := dialects[agent].sandboxNote; n != "" && !remove {
		p.notes = append(p.notes, n)
	}
	return p, nil
}

// jsonEdit changes a parsed settings document: it reports whether it
// changed anything, and a note for the person.
type jsonEdit func(doc *jnode, remove bool) (changed bool, note string, err error)

// addJSON plans the edit of one JSON settings file.
func (p *installPlan) addJSON(o *Options, path string, remove bool, edit jsonEdit) error {
	e := fileEdit{path: path, show: displayPath(o, path), perm: 0o644}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		e.before, e.exists = data, true
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	doc := jobject()
	if len(bytes.TrimSpace(data)) > 0 {
		if doc, err = parseJSONDoc(data); err != nil {
			return fmt.Errorf("%s: %v: fix it, or edit it by hand", path, err)
		}
		if doc.kind != '{' {
			return fmt.Errorf("%s does not hold a JSON object", path)
		}
	}
	changed, note, err := edit(doc, remove)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if note != "" {
		p.notes = append(p.notes, note)
	}
	e.keep, e.after = e.exists, e.before
	if changed {
		unit, nl := jsonStyle(data)
		e.keep, e.after = true, encodeJSONDoc(doc, unit, nl)
		if bytes.Contains(data, []byte("\r\n")) {
			e.after = crlfLines(e.after)
		}
		if remove && len(doc.keys) == 0 {
			e.keep, e.after = false, nil // nothing of the person's was in it
		}
	}
	p.edits = append(p.edits, e)
	return nil
}

// crlfLines ends every line of b with CRLF, as the file it was merged into
// does: the lines install wrote end with LF alone.
func crlfLines(b []byte) []byte {
	return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
}

// The hooks install writes, per agent.
var (
	// Claude Code: the tools intentgate knows, and every MCP tool.
	claudeSpecs = []hookSpec{
		{event: "PreToolUse", matcher: claudeTools}, {event: "PostToolUse", matcher: claudeTools},
		{event: "SessionStart"}, {event: "UserPromptSubmit"},
	}
	// Codex: every tool. One intentgate cannot classify is refused without
	// an intent and audited like a command, so none may bypass the hook.
	codexSpecs = []hookSpec{
		{event: "PreToolUse", matcher: ".*"}, {event: "PostToolUse", matcher: ".*"},
		{event: "SessionStart"}, {event: "UserPromptSubmit"},
	}
	// Gemini CLI: every tool, MCP ones (mcp_<server>_<tool>) included.
	geminiSpecs = []hookSpec{
		{event: "BeforeTool", matcher: ".*"}, {event: "AfterTool", matcher: ".*"},
		{event: "SessionStart"}, {event: "BeforeAgent"},
	}
	// Cline: one executable per event in its hooks directory.
	clineEvents = []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "TaskStart", "TaskResume"}
)

const claudeTools = "Write|Edit|MultiEdit|NotebookEdit|Read|Bash|mcp__.*"

// hookSpec is one hook install adds to a Claude-shaped "hooks" object:
// {"<event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}]}.
type hookSpec struct {
	event   string
	matcher string // "" for events without one
	url     string // an http hook to this URL instead of the command
}

// claudeHooks merges specs into doc["hooks"] (Claude Code, Codex, Gemini
// CLI, whose handlers are named), or removes every hook of ours from it.
func claudeHooks(specs []hookSpec, command string, named bool, ours func(string) bool) jsonEdit {
	isOurs := func(h *jnode) bool {
		c, ok := h.get("command").str()
		if u, isURL := h.get("url").str(); !ok && isURL {
			return daemon.IsHookURL(u)
		}
		return ok && ours(c)
	}
	return func(doc *jnode, remove bool) (bool, string, error) {
		hooks := doc.get("hooks")
		if hooks != nil && hooks.kind != '{' {
			return false, "", errors.New(`"hooks" is not an object`)
		}
		if remove {
			if hooks == nil {
				return false, "", nil
			}
			changed := removeHooks(hooks, isOurs, true)
			if changed && len(hooks.keys) == 0 {
				doc.del("hooks")
			}
			return changed, "", nil
		}
		changed := false
		if hooks == nil {
			hooks = jobject()
			doc.set("hooks", hooks)
			changed = true
		}
		for _, s := range specs {
			handler := jobject()
			if named {
				// Gemini CLI names handlers, for /hooks enable|disable.
				handler.set("name", jvalue("intentgate"))
			}
			if s.url != "" {
				handler.set("type", jvalue("http")).set("url", jvalue(s.url))
			} else {
				handler.set("type", jvalue("command")).set("command", jvalue(command))
			}
			group := jobject()
			if s.matcher != "" {
				group.set("matcher", jvalue(s.matcher))
			}
			group.set("hooks", jarray(handler))
			c, err := mergeHookGroup(hooks, s.event, group, handler, isOurs)
			if err != nil {
				return false, "", err
			}
			changed = changed || c
		}
		return changed, "", nil
	}
}

// mergeHookGroup adds group under event unless a hook of ours is there, in
// which case that hook (and, in a group of its own, its matcher) is brought
// up to date.
func mergeHookGroup(hooks *jnode, event string, group, handler *jnode, isOurs func(*jnode) bool) (bool, error) {
	arr := hooks.get(event)
	if arr == nil {
		hooks.set(event, jarray(group))
		return true, nil
	}
	if arr.kind != '[' {
		return false, fmt.Errorf(`"hooks.%s" is not an array`, event)
	}
	changed, found := false, false
	for gi, g := range arr.vals {
		hs := g.get("hooks")
		if hs == nil || hs.kind != '[' {
			continue
		}
		for hi, h := range hs.vals {
			if !isOurs(h) {
				continue
			}
			found = true
			if len(hs.vals) == 1 {
				if !g.equal(group) {
					arr.setItem(gi, group)
					changed = true
				}
			} else if !h.equal(handler) {
				hs.setItem(hi, handler)
				changed = true
			}
		}
	}
	if !found {
		arr.push(group)
		changed = true
	}
	return changed, nil
}

// removeHooks drops every hook of ours from a hooks object. grouped says
// whether events hold matcher groups (Claude's shape) or handlers directly
// (Cursor's). Groups, events left empty by the removal go too.
func removeHooks(hooks *jnode, isOurs func(*jnode) bool, grouped bool) bool {
	changed := false
	for ei := 0; ei < len(hooks.keys); {
		arr := hooks.vals[ei]
		if arr.kind != '[' {
			ei++
			continue
		}
		removedHere := false
		var kept []*jnode
		for _, g := range arr.vals {
			if !grouped {
				if isOurs(g) {
					removedHere = true
				} else {
					kept = append(kept, g)
				}
				continue
			}
			hs := g.get("hooks")
			if hs == nil || hs.kind != '[' {
				kept = append(kept, g)
				continue
			}
			var keepH []*jnode
			for _, h := range hs.vals {
				if isOurs(h) {
					removedHere = true
				} else {
					keepH = append(keepH, h)
				}
			}
			if len(keepH) == len(hs.vals) {
				kept = append(kept, g)
			} else if len(keepH) > 0 {
				hs.setItems(keepH)
				kept = append(kept, g)
			}
		}
		if !removedHere {
			ei++
			continue
		}
		changed = true
		arr.setItems(kept)
		if len(kept) == 0 {
			hooks.delAt(ei)
			continue
		}
		ei++
	}
	return changed
}

// cursorHooks merges intentgate's handlers into Cursor's hooks.json.
// The generic preToolUse hook is limited to file tools: shell commands,
// reads and MCP calls have events of their own.
func cursorHooks(command string, ours func(string) bool) jsonEdit {
	isOurs := func(h *jnode) bool {
		c, ok := h.get("command").str()
		return ok && ours(c)
	}
	events := []struct{ event, matcher string }{
		{"sessionStart", ""}, {"beforeSubmitPrompt", ""},
		{"preToolUse", "Write|Edit|StrReplace|MultiEdit|Delete"},
		{"beforeShellExecution", ""}, {"afterShellExecution", ""},
		{"beforeMCPExecution", ""}, {"afterMCPExecution", ""},
		{"beforeReadFile", ""}, {"afterFileEdit", ""},
	}
	return func(doc *jnode, remove bool) (bool, string, error) {
		hooks := doc.get("hooks")
		if hooks != nil && hooks.kind != '{' {
			return false, "", errors.New(`"hooks" is not an object`)
		}
		if remove {
			if hooks == nil {
				return false, "", nil
			}
			changed := removeHooks(hooks, isOurs, false)
			if changed && len(hooks.keys) == 0 {
				doc.del("hooks")
				// A file install created holds nothing else but its version.
				if len(doc.keys) == 1 && doc.keys[0] == "version" {
					doc.del("version")
				}
			}
			return changed, "", nil
		}
		changed := false
		if doc.get("version") == nil {
			doc.set("version", jvalue(1))
			changed = true
		}
		if hooks == nil {
			hooks = jobject()
			doc.set("hooks", hooks)
			changed = true
		}
		for _, e := range events {
			handler := jobject().set("command", jvalue(command))
			if e.matcher != "" {
				handler.set("matcher", jvalue(e.matcher))
			}
			arr := hooks.get(e.event)
			if arr == nil {
				hooks.set(e.event, jarray(handler))
				changed = true
				continue
			}
			if arr.kind != '[' {
				return false, "", fmt.Errorf(`"hooks.%s" is not an array`, e.event)
			}
			found := false
			for i, h := range arr.vals {
				if isOurs(h) {
					found = true
					if !h.equal(handler) {
						arr.setItem(i, handler)
						changed = true
					}
				}
			}
			if !found {
				arr.push(handler)
				changed = true
			}
		}
		return changed, "", nil
	}
}

// mcpServer registers `intentgate mcp` under doc[key].intentgate. An entry
// already there is left as it is, whoever wrote it; uninstall removes it
// only if it is exactly what install writes.
func mcpServer(o *Options, key string) jsonEdit {
	want := func() *jnode {
		return jobject().set("command", jvalue(o.Command)).set("args", jarray(jvalue("mcp")))
	}
	return func(doc *jnode, remove bool) (bool, string, error) {
		servers := doc.get(key)
		if servers != nil && servers.kind != '{' {
			return false, "", fmt.Errorf("%q is not an object", key)
		}
		cur := servers.get("intentgate")
		if remove {
			if cur == nil || !cur.equal(want()) {
				return false, "", nil
			}
			servers.del("intentgate")
			if len(servers.keys) == 0 {
				doc.del(key)
			}
			return true, "", nil
		}
		if cur != nil {
			if cur.equal(want()) {
				return false, "", nil
			}
			return false, "an MCP server named intentgate is already configured; it is left as it is", nil
		}
		if servers == nil {
			servers = jobject()
			doc.set(key, servers)
		}
		servers.set("intentgate", want())
		return true, "", nil
	}
}

// addCodexTOML plans the edit of Codex's config.toml.
func (p *installPlan) addCodexTOML(o *Options, path string, remove bool) error {
	e := fileEdit{path: path, show: displayPath(o, path), perm: 0o644}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		e.before, e.exists = data, true
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	e.keep, e.after = e.exists, e.before
	if remove {
		rest, had := cutTOMLBlock(string(data))
		if had {
			e.after = []byte(rest)
			e.keep = rest != ""
		}
	} else {
		next, note, err := installTOMLBlock(path, string(data), o.Command)
		if err != nil {
			return err
		}
		if note != "" {
			p.notes = append(p.notes, note)
		}
		if next != string(data) {
			e.keep, e.after = true, []byte(next)
		}
	}
	p.edits = append(p.edits, e)
	return nil
}

const clineMarker = "# intentgate: added by `intentgate install cline`; `intentgate uninstall cline` removes this file."

func clineScript(command string) string {
	return "#!/bin/sh\n" + clineMarker + "\nexec " + command + "\n"
}

// addClineScript plans one of Cline's hook executables. A script of the
// person's own under that name is left alone: Cline runs one per event.
func (p *installPlan) addClineScript(o *Options, path, command string, remove bool) error {
	e := fileEdit{path: path, show: displayPath(o, path), perm: 0o755}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		e.before, e.exists = data, true
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	mine := e.exists && strings.Contains(string(data), clineMarker)
	e.keep, e.after = e.exists, e.before
	switch {
	case remove:
		if mine {
			e.keep, e.after = false, nil
		}
	case e.exists && !mine:
		p.notes = append(p.notes, fmt.Sprintf("%s exists and is not intentgate's; Cline runs one script per event, so intentgate's was not installed there: call %q from it", e.show, command))
	default:
		e.keep, e.after = true, []byte(clineScript(command))
	}
	p.edits = append(p.edits, e)
	return nil
}

func planClaudeCode(p *installPlan, o *Options, root string, remove bool) (err error) {
	ours := o.oursCommand("claude-code")
	command := o.hookCommand("claude-code")
	// code.claude.com/docs/en/hooks: settings.json "hooks" maps an event
	// to matcher groups of command handlers; MCP servers are in .mcp.json
	// for a project, ~/.claude.json for the user.
	dir := filepath.Join(root, ".claude")
	specs := claudeSpecs
	if o.Daemon != "" && !remove {
		p.notes = append(p.notes, daemonNote(root, o.Daemon))
	}
	err = p.addJSON(o, filepath.Join(dir, "settings.json"), remove, withClaudeSandbox(root, o.Global, claudeHooks(specs, command, false, ours)))
	mcp := filepath.Join(root, ".mcp.json")
	if o.Global {
		mcp = filepath.Join(root, ".claude.json")
	}
	if err == nil {
		err = p.addJSON(o, mcp, remove, mcpServer(o, "mcpServers"))
	}
	p.dirs = []string{dir}
	return err
}

func planCodex(p *installPlan, o *Options, root string, remove bool) (err error) {
	ours := o.oursCommand("codex")
	command := o.hookCommand("codex")
	// developers.openai.com/codex/hooks: .codex/hooks.json has Claude's
	// shape (its root takes only "description" and "hooks"); MCP
	// servers are [mcp_servers.<name>] tables of config.toml.
	dir := filepath.Join(root, ".codex")
	if o.Global {
		if ch := os.Getenv("CODEX_HOME"); ch != "" {
			dir = ch
		}
	}
	specs := codexSpecs
	err = p.addJSON(o, filepath.Join(dir, "hooks.json"), remove, claudeHooks(specs, command, false, ours))
	if err == nil {
		err = p.addCodexTOML(o, filepath.Join(dir, "config.toml"), remove)
	}
	if err == nil && !o.Global {
		err = p.codexSandbox(filepath.Join(dir, "config.toml"), remove)
	}
	if !o.Global {
		p.dirs = []string{dir}
		if err == nil {
			var home string
			if home, err = o.home(); err == nil {
				user := filepath.Join(home, ".codex")
				if ch := os.Getenv("CODEX_HOME"); ch != "" {
					user = ch
				}
				err = p.addCodexTrust(o, filepath.Join(user, "config.toml"), root, remove)
				if o.Trust && !remove {
					p.codexTrust = &codexHookTrust{root: root, hooks: filepath.Join(dir, "hooks.json"),
						user: filepath.Join(user, "config.toml"), command: command}
				}
			}
		}
	}
	if !remove && p.codexTrust == nil {
		p.notes = append(p.notes, codexTrustNote(root))
	}
	return err
}

func planGemini(p *installPlan, o *Options, root string, remove bool) (err error) {
	ours := o.oursCommand("gemini")
	command := o.hookCommand("gemini")
	// geminicli.com/docs/hooks: settings.json "hooks" maps an event to
	// matcher groups of {name, type, command} handlers; "mcpServers"
	// registers MCP servers in the same file.
	dir := filepath.Join(root, ".gemini")
	specs := geminiSpecs
	both := func(doc *jnode, remove bool) (bool, string, error) {
		c1, n1, err := claudeHooks(specs, command, true, ours)(doc, remove)
		if err != nil {
			return false, "", err
		}
		c2, n2, err := mcpServer(o, "mcpServers")(doc, remove)
		return c1 || c2, strings.TrimSpace(n1 + " " + n2), err
	}
	err = p.addJSON(o, filepath.Join(dir, "settings.json"), remove, withGeminiHooksOn(o.Global, both))
	p.dirs = []string{dir}
	if !remove {
		p.notes = append(p.notes, "some Gemini CLI versions run hooks only with the hooks system enabled (/settings, Advanced, Enable Hooks System)")
	}
	return err
}

func planCursor(p *installPlan, o *Options, root string, remove bool) (err error) {
	ours := o.oursCommand("cursor")
	command := o.hookCommand("cursor")
	// cursor.com/docs/agent/hooks: hooks.json {"version":1,"hooks":{
	// "<event>":[{"command":...}]}}; MCP servers in .cursor/mcp.json.
	dir := filepath.Join(root, ".cursor")
	err = p.addJSON(o, filepath.Join(dir, "hooks.json"), remove, cursorHooks(command, ours))
	if err == nil {
		err = p.addJSON(o, filepath.Join(dir, "mcp.json"), remove, mcpServer(o, "mcpServers"))
	}
	p.dirs = []string{dir}
	return err
}

func planCline(p *installPlan, o *Options, root string, remove bool) (err error) {
	command := o.hookCommand("cline")
	// Cline runs the executable named after the event in
	// .clinerules/hooks/ (or ~/Documents/Cline/Hooks/).
	dir := filepath.Join(root, ".clinerules", "hooks")
	if o.Global {
		dir = filepath.Join(root, "Documents", "Cline", "Hooks")
	}
	for _, ev := range clineEvents {
		if err = p.addClineScript(o, filepath.Join(dir, ev), command, remove); err != nil {
			return err
		}
	}
	if !o.Global {
		p.dirs = []string{dir, filepath.Join(root, ".clinerules")}
	}
	if !remove {
		p.notes = append(p.notes, "enable hooks in Cline's settings; Cline keeps MCP servers in its own settings: "+
			`add {"intentgate": {"command": "`+o.Command+`", "args": ["mcp"]}} in its MCP Servers panel`)
	}
	return err
}
