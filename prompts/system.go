package prompts

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// SystemOptions are what the system prompt depends on. For fixed options
// System returns the same text on every machine; WithHost fills in the
// machine-dependent fields from the running host.
type SystemOptions struct {
	Mode      string // a built-in mode slug; empty means DefaultMode
	Workspace string // the workspace root, as an absolute path
	OS        string // e.g. "Linux"
	Shell     string // the shell execute_command runs commands in
	Home      string // the user's home directory
	// CustomInstructions are the user's own instructions for every mode.
	CustomInstructions string
	// Intents are the declared intents to show the model, in order.
	Intents []Intent
}

// Intent is a declared intent as the model is shown it.
type Intent struct {
	ID     string
	Name   string
	Status string
	Scope  []string
}

// WithHost returns o with OS, Shell and Home filled in from the running host
// where they are empty.
func (o SystemOptions) WithHost() SystemOptions {
	if o.OS == "" {
		o.OS = osName(runtime.GOOS)
	}
	if o.Shell == "" {
		o.Shell = commandShell(runtime.GOOS)
	}
	if o.Home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			o.Home = h
		}
	}
	return o
}

func osName(goos string) string {
	switch goos {
	case "darwin":
		return "macOS"
	case "windows":
		return "Windows"
	case "linux":
		return "Linux"
	case "freebsd":
		return "FreeBSD"
	case "openbsd":
		return "OpenBSD"
	case "netbsd":
		return "NetBSD"
	}
	return goos
}

// commandShell is the shell execute_command runs commands in (see
// tools/command_unix.go and tools/command_windows.go), which is not
// necessarily the user's login shell: the model must write for the one that
// actually runs its commands.
func commandShell(goos string) string {
	if goos == "windows" {
		return "cmd.exe"
	}
	return "/bin/sh"
}

// System returns the system prompt for a model working in opts.Mode. Its
// sections follow Roo Code's system prompt (src/core/prompts/system.ts):
// role, markdown rules, tool use, capabilities, modes, rules, system
// information, objective and custom instructions, with the intent protocol
// after the tool-use section. The tool definitions themselves are not part of
// it: they go to the model through its API's function calling (see OpenAI and
// Anthropic). A mode that is not built in is described as DefaultMode.
func System(opts SystemOptions) string {
	m := modeOrDefault(opts.Mode)
	tools := toolsFor(m)
	s := &sections{m: m, opts: opts, tools: tools}
	parts := []string{
		m.RoleDefinition,
		s.markdown(),
		s.toolUse(),
		s.intents(),
		s.capabilities(),
		s.modes(),
		s.rules(),
		s.systemInfo(),
		s.objective(),
		s.customInstructions(),
	}
	var b strings.Builder
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p)
	}
	b.WriteString("\n")
	return b.String()
}

type sections struct {
	m     Mode
	opts  SystemOptions
	tools []Tool
}

func (s *sections) has(group string) bool {
	_, ok := s.m.Group(group)
	return ok
}

// editRestriction describes the mode's edit restriction, or "" if it has none.
func (s *sections) editRestriction() string {
	g, ok := s.m.Group("edit")
	if !ok || g.FileRegex == "" {
		return ""
	}
	r := "files whose workspace path matches " + g.FileRegex
	if g.Description != "" {
		r += " (" + strings.ToLower(g.Description[:1]) + g.Description[1:] + ")"
	}
	return r
}

func (s *sections) workspace() string {
	if s.opts.Workspace == "" {
		return "the current directory"
	}
	return filepath.ToSlash(s.opts.Workspace)
}

func (s *sections) markdown() string {
	return `====

MARKDOWN RULES

Write every reply in Markdown, attempt_completion results included. Whenever you name a file or a code construct, make it a link to where it lives: [` + "`name`" + `](relative/path.ext:line). The line is required for a construct and optional for a file: [` + "`ParseConfig()`" + `](internal/config/parse.go:42), [` + "`go.mod`" + `](go.mod).`
}

func (s *sections) toolUse() string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name
	}
	return `====

TOOL USE

You act through tools, which you call with the function-calling mechanism of the API that serves you; never write a tool call as XML or JSON in the text of a reply. Make one tool call per message, and wait for its result before you decide on the next step.

Tools available in ` + s.m.Name + ` mode: ` + strings.Join(names, ", ") + `.

# Tool Use Guidelines

1. Work out what you already know and what you still need to find out.
2. Pick the tool that best fits the next step. A dedicated tool beats a command: list_files rather than ls, search_files rather than grep.
3. Never assume how a call turned out. Its result says whether it succeeded, failed, or was refused by intentgate, and what to do next; let each step follow from the result of the one before.`
}

func (s *sections) intents() string {
	var b strings.Builder
	b.WriteString(IntentProtocol())
	b.WriteString("\n")
	if len(s.opts.Intents) == 0 {
		b.WriteString("No intents were listed with this prompt. If you do not know which intent your task belongs to, ask the user; a refused select_active_intent names the intents that are IN_PROGRESS.")
		return b.String()
	}
	b.WriteString("The declared intents (only IN_PROGRESS ones can be selected):\n")
	for _, in := range s.opts.Intents {
		fmt.Fprintf(&b, "- %s [%s] %s; owned_scope: %s\n", oneLine(in.ID), oneLine(in.Status), oneLine(in.Name),
			oneLine(strings.Join(in.Scope, ", ")))
	}
	return b.String()
}

func (s *sections) capabilities() string {
	var items []string
	if s.has("read") {
		items = append(items, "You can explore the workspace: list_files shows a directory (one level, or the whole tree with recursive), search_files finds a regular expression across files and shows each match in context, list_code_definition_names outlines the definitions in source files, and read_file shows a file with numbered lines. On an unfamiliar task, a good start is to list the workspace root, outline the directories that matter, and then read the files you need.")
	}
	if s.has("edit") {
		e := "You can create and change files: write_to_file for new files and complete rewrites, apply_diff for targeted changes, insert_content to add lines, and search_and_replace for repeated substitutions."
		if r := s.editRestriction(); r != "" {
			e += " In " + s.m.Name + " mode you may change only " + r + "."
		}
		items = append(items, e)
	}
	if s.has("command") {
		items = append(items, "You can run commands with execute_command, in "+s.shell()+", from the workspace root or a directory inside it. Each command runs in a fresh shell with no input and is stopped when it runs past its time limit, so run builds, tests and tools that finish on their own, not servers or watchers. Say briefly what each command is for.")
	}
	switch {
	case !s.has("read") && !s.has("edit") && !s.has("command"):
		items = append(items, s.m.Name+" mode does not read or change files itself: it hands the work to other modes with new_task.")
	case !s.has("edit") && !s.has("command"):
		items = append(items, s.m.Name+" mode cannot change files or run commands. If the task needs that, say so and use switch_mode.")
	}
	items = append(items, "You can ask the user a question (ask_followup_question), keep a todo list for work with several steps (update_todo_list), switch to another mode (switch_mode), hand a subtask to another mode (new_task), and present your finished work (attempt_completion).")
	return "====\n\nCAPABILITIES\n\n" + bullets(items)
}

func (s *sections) shell() string {
	if s.opts.Shell == "" {
		return "the shell named under SYSTEM INFORMATION"
	}
	return s.opts.Shell
}

func (s *sections) modes() string {
	var b strings.Builder
	fmt.Fprintf(&b, "====\n\nMODES\n\nYou are in %s mode (%s). The modes:\n", s.m.Name, s.m.Slug)
	for _, m := range builtinModes {
		fmt.Fprintf(&b, "  * \"%s\" mode (%s): for %s\n", m.Name, m.Slug, m.WhenToUse)
	}
	b.WriteString("A workspace may define more modes in .orchestration/modes.yaml. Use switch_mode to move to another mode, or new_task to hand a subtask to one.")
	return b.String()
}

func (s *sections) rules() string {
	ws := s.workspace()
	var items []string
	add := func(format string, args ...any) { items = append(items, fmt.Sprintf(format, args...)) }

	add("The workspace root is %s. Give every path relative to it; a path that leads outside it is refused (PATH_ESCAPE).", ws)
	add("You cannot change the directory the tools work from: every tool starts at the workspace root, so pass each one the path it needs.")
	if s.has("command") {
		add("To run a command in another directory of the workspace, pass it as execute_command's cwd, or begin the command with a cd into it (`cd web && npm test`), all as one command.")
	}
	add("Don't use ~ or $HOME to refer to the home directory; write paths out.")
	if s.has("command") {
		add("Before you run a command, look at SYSTEM INFORMATION and write the command for that operating system and shell.")
	}
	if s.has("read") {
		r := "Make search_files expressions precise enough to avoid a flood of matches and loose enough not to miss variants. The matches come with context: read it, and follow up with read_file on the files that matter"
		if s.has("edit") {
			r += " before you change them"
		}
		add("%s.", r)
	}
	if s.has("edit") {
		add("To change an existing file, prefer apply_diff, insert_content and search_and_replace to write_to_file, which is slower and rewrites the whole file. insert_content adds lines before a line number; line 0 appends them at the end.")
		add("When you use write_to_file, give the complete file: every part, changed or not, with no placeholder such as \"// rest unchanged\". Whatever you leave out is deleted.")
		add("Put the files of a new project in a directory of their own unless the user says otherwise, laid out as is usual for that kind of project; write_to_file creates directories as needed.")
	}
	restrict := "Modes can restrict which files they may change; a change outside the allowed files is refused with TOOL_NOT_ALLOWED, naming the mode and the pattern it allows."
	switch r := s.editRestriction(); {
	case r != "":
		restrict += fmt.Sprintf(" In %s mode you may change only %s: a change to src/app.js, for example, is refused.", s.m.Name, r)
	case !s.has("edit"):
		restrict += fmt.Sprintf(" %s mode may not change any file.", s.m.Name)
	}
	add("%s", restrict)
	if s.has("read") {
		add("Take the kind of project into account (language, framework, build system), and read its manifest and configuration files (go.mod, package.json, pyproject.toml and the like) to learn its dependencies and conventions.")
	}
	if s.has("edit") {
		add("Fit every change to the code around it: its conventions, its style, and the way it is used.")
	}
	add("Don't ask for more information than you need. Use the tools to find things out, and finish the task with attempt_completion; the user may answer with feedback for you to act on.")
	ask := "Ask the user questions only with ask_followup_question, only when your tools cannot give you the answer, and always with 2 to 4 concrete suggested answers, most likely first."
	if s.has("read") {
		ask += " When the user mentions a file without saying where it is, look for it with list_files or search_files instead of asking."
	}
	add("%s", ask)
	if s.has("edit") {
		add("If the user pastes a file's content into a message, you need not read the file to understand it; but to overwrite it you must still read it with read_file, since intentgate accepts a write only over content this session has read.")
	}
	add("Your aim is to complete the task, not to hold a conversation. Never end an attempt_completion result with a question or an offer of more help.")
	add("Be direct and technical. Leave out pleasantries and filler at the start of a message: \"The tests pass\", not \"Great news: the tests pass\".")
	add("When you are given images, examine them closely and use what they show.")
	add("Wait for the result of each tool call before you make the next: every step depends on the one before having worked.")
	return "====\n\nRULES\n\n" + bullets(items)
}

func (s *sections) systemInfo() string {
	orUnknown := func(v string) string {
		if v == "" {
			return "unknown"
		}
		return v
	}
	home := s.opts.Home
	if home != "" {
		home = filepath.ToSlash(home)
	}
	return fmt.Sprintf(`====

SYSTEM INFORMATION

Operating System: %s
Default Shell: %s
Home Directory: %s
Current Workspace Directory: %s

Every tool starts in the workspace directory, and you cannot change it. A command's cwd, or a cd inside a command, changes the directory of that one command only.`,
		orUnknown(s.opts.OS), orUnknown(s.opts.Shell), orUnknown(home), s.workspace())
}

func (s *sections) objective() string {
	return `====

OBJECTIVE

Work through the task step by step, in a deliberate order.

1. Analyze the task and set yourself clear, achievable goals, in a sensible order.
2. Make select_active_intent your first tool call, with the intent the task belongs to. The files you will change must lie in its owned_scope, and its constraints and acceptance criteria bind your work.
3. Work through the goals one at a time, one tool call at a time. Each result tells you what is done and what remains.
4. Think before each call. Decide which tool fits the step, then go through its required parameters: has the user given each one, or can you infer it with confidence from what you know? If so, make the call. If a required value is missing, don't call the tool with a guess or a placeholder; ask the user for it with ask_followup_question. Don't ask about optional parameters.
5. When the task is done and the intent's acceptance criteria are met, present the result with attempt_completion.
6. The user may reply with feedback; use it to improve your work. Don't drift into back-and-forth: don't end your replies with questions or offers of further help.`
}

func (s *sections) customInstructions() string {
	global := strings.TrimSpace(s.opts.CustomInstructions)
	mode := strings.TrimSpace(s.m.Instructions)
	if global == "" && mode == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("====\n\nUSER'S CUSTOM INSTRUCTIONS\n\nFollow these additional instructions as far as you can without breaking the tool-use rules or the intent protocol above.")
	if global != "" {
		b.WriteString("\n\nGlobal Instructions:\n" + global)
	}
	if mode != "" {
		b.WriteString("\n\nMode-specific Instructions:\n" + mode)
	}
	return b.String()
}

// oneLine keeps a value from a workspace file on its line of the prompt.
func oneLine(v string) string { return strings.Join(strings.Fields(v), " ") }

func bullets(items []string) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("- " + it)
	}
	return b.String()
}
