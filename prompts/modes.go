package prompts

import "slices"

// The built-in modes as the prompt describes them. The mode policy the engine
// enforces (TOOL_NOT_ALLOWED) is orchestration's (orchestration/modes.go);
// this table repeats its groups and file restriction, with the texts a model
// reads, and cmd/intentgate-full's TestPromptModesMatchOrchestration keeps the two
// in step. TODO: let System and ForMode take an orchestration mode, so that
// custom modes from .orchestration/modes.yaml are described too and only one
// table of groups remains.

// DefaultMode is the mode of a session that has not chosen one, as in Roo
// Code.
const DefaultMode = "code"

// Mode is a mode as the model is told about it.
type Mode struct {
	Slug string
	Name string
	// RoleDefinition opens the system prompt: who the model is in this mode.
	RoleDefinition string
	// WhenToUse tells a model in any mode when to switch to this one.
	WhenToUse string
	Groups    []GroupEntry
	// Instructions are the mode's own custom instructions.
	Instructions string
}

// GroupEntry is one tool group a mode may use, optionally restricted to the
// files whose workspace path matches FileRegex.
type GroupEntry struct {
	Name        string
	FileRegex   string
	Description string // of the restriction, for people
}

// Group returns the mode's entry for group, if the mode has it.
func (m Mode) Group(group string) (GroupEntry, bool) {
	i := slices.IndexFunc(m.Groups, func(g GroupEntry) bool { return g.Name == group })
	if i < 0 {
		return GroupEntry{}, false
	}
	return m.Groups[i], true
}

// The group lists are Roo Code's DEFAULT_MODES (packages/types/src/mode.ts);
// mcp has no tools in intentgate yet and is kept so the lists
// stay comparable. The texts are ours.
var builtinModes = []Mode{
	{
		Slug: "code",
		Name: "Code",
		RoleDefinition: "You are an experienced software engineer who writes, changes and refactors code in many " +
			"languages and frameworks, with a sound command of design patterns and established practice.",
		WhenToUse: "writing, changing or refactoring code: new features, bug fixes, new files and improvements, " +
			"in any language or framework.",
		Groups: groups("read", "edit", "browser", "command", "mcp"),
	},
	{
		Slug: "architect",
		Name: "Architect",
		RoleDefinition: "You are a technical lead who plans before anything is built. You investigate, ask " +
			"questions and gather context, then turn the task into a concrete plan that the user reviews and " +
			"approves before switching to another mode to carry it out.",
		WhenToUse: "planning and design before implementation: breaking a problem down, writing a technical " +
			"specification, shaping a system's architecture, weighing approaches before coding.",
		Groups: []GroupEntry{{Name: "read"},
			{Name: "edit", FileRegex: `\.md$`, Description: "Markdown files only"},
			{Name: "browser"}, {Name: "mcp"}},
		Instructions: `1. Gather context with the read tools before you propose anything.

2. Ask the user clarifying questions where the task leaves room for interpretation.

3. Once you understand the request, break it into concrete steps and record them with update_todo_list. Each item should be specific and actionable, in the order the work will be done, focused on one outcome, and clear enough for another mode to carry out on its own.

4. Keep the todo list up to date as you learn more.

5. Ask the user whether the plan suits them or should change, and refine it together.

6. Use Mermaid diagrams where they make a workflow or an architecture clearer; inside square brackets in Mermaid, avoid double quotes and parentheses, which break the parser.

7. When the plan is agreed, use switch_mode to move to a mode that can implement it.

Keep plans as todo lists rather than long documents, and never estimate how long the work will take. In this mode you may edit only Markdown files (paths matching \.md$).`,
	},
	{
		Slug: "ask",
		Name: "Ask",
		RoleDefinition: "You are a technical advisor who answers questions about software development and " +
			"technology: you explain code, concepts and tools accurately and in depth.",
		WhenToUse: "explanations, documentation and answers to technical questions: understanding concepts, " +
			"analyzing existing code, getting recommendations, without changing anything.",
		Groups: groups("read", "browser", "mcp"),
		Instructions: "Answer the user's questions thoroughly: analyze the code, explain the concepts, and consult " +
			"what resources you can reach. Do not start implementing anything unless the user explicitly asks for " +
			"it. Add Mermaid diagrams when they make an answer clearer.",
	},
	{
		Slug: "debug",
		Name: "Debug",
		RoleDefinition: "You are a debugging specialist who diagnoses problems methodically and finds their " +
			"cause before changing anything.",
		WhenToUse: "troubleshooting: investigating errors and failures, reading stack traces, adding logging, " +
			"and finding the root cause before a fix.",
		Groups: groups("read", "edit", "browser", "command", "mcp"),
		Instructions: "Consider five to seven possible sources of the problem, narrow them down to the one or two " +
			"most likely, and add logging or a test that confirms or refutes them. Ask the user to confirm the " +
			"diagnosis before you fix the problem.",
	},
	{
		Slug: "orchestrator",
		Name: "Orchestrator",
		RoleDefinition: "You are a workflow coordinator. You split complex work into well-defined subtasks, hand " +
			"each to the mode best suited to it, and bring the results together; you know what every mode can and " +
			"cannot do.",
		WhenToUse: "large, multi-step work that spans several specialties and is best split into subtasks " +
			"carried out by other modes.",
		Groups: nil,
		Instructions: `You coordinate; the subtasks do the work.

1. Break a complex task into logical subtasks, each suited to one mode.

2. Delegate each subtask with new_task, choosing the mode that fits its goal. Its message must contain:
   - all the context from the overall task and earlier subtasks that it needs;
   - exactly what it is to accomplish, and nothing beyond that;
   - the id of the intent it must select before it changes anything;
   - that it must finish with attempt_completion, whose result is a concise but complete summary of the outcome, since that summary is the record of what was done;
   - that these instructions take precedence over any general instructions of its mode that conflict with them.

3. Follow the progress of the subtasks. When one completes, study its result and decide the next step.

4. Help the user see how the subtasks fit together, and explain why each went to the mode it did.

5. When all subtasks are done, sum up what was accomplished overall.

6. Ask clarifying questions when you need them to split the work well.

7. Suggest improvements to the workflow based on what the subtasks reported.

When a request changes focus or needs different expertise, start a subtask for it rather than overloading the current one.`,
	},
}

func groups(names ...string) []GroupEntry {
	gs := make([]GroupEntry, len(names))
	for i, n := range names {
		gs[i] = GroupEntry{Name: n}
	}
	return gs
}

// Modes returns the built-in modes.
func Modes() []Mode {
	out := make([]Mode, len(builtinModes))
	for i, m := range builtinModes {
		m.Groups = slices.Clone(m.Groups)
		out[i] = m
	}
	return out
}

// LookupMode returns the built-in mode with the given slug.
func LookupMode(slug string) (Mode, bool) {
	for _, m := range Modes() {
		if m.Slug == slug {
			return m, true
		}
	}
	return Mode{}, false
}

// modeOrDefault is Roo Code's getModeBySlug(mode) || default: a slug that is
// not built in gets the default mode's description. Callers that must not
// guess check LookupMode first.
func modeOrDefault(slug string) Mode {
	if m, ok := LookupMode(slug); ok {
		return m
	}
	m, _ := LookupMode(DefaultMode)
	return m
}

// ForMode returns the tools a model in mode may call: those of the mode's
// groups, and the tools every mode has. An edit group restricted to some files
// still lists its tools; the restriction is the engine's to enforce and the
// system prompt's to explain. A slug that is not built in gets the default
// mode's tools.
func ForMode(mode string) []Tool {
	return toolsFor(modeOrDefault(mode))
}

func toolsFor(m Mode) []Tool {
	var out []Tool
	for _, t := range Tools() {
		if _, ok := m.Group(t.Group); ok || t.Always {
			out = append(out, t)
		}
	}
	return out
}
