package prompts

import (
	"flag"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenOptions are fixed, so the goldens do not depend on the machine that
// runs the tests.
func goldenOptions(mode string) SystemOptions {
	return SystemOptions{
		Mode:               mode,
		Workspace:          "/home/dev/project",
		OS:                 "Linux",
		Shell:              "/bin/sh",
		Home:               "/home/dev",
		CustomInstructions: "Write comments and documentation in British English.",
		Intents: []Intent{
			{ID: "INT-001", Name: "JWT authentication migration", Status: "IN_PROGRESS",
				Scope: []string{"src/auth/**", "src/middleware/jwt.go"}},
			{ID: "INT-002", Name: "Billing export", Status: "BLOCKED", Scope: []string{"src/billing/**"}},
		},
	}
}

func TestSystemGolden(t *testing.T) {
	for _, m := range Modes() {
		t.Run(m.Slug, func(t *testing.T) {
			checkGolden(t, "system-"+m.Slug+".golden", []byte(System(goldenOptions(m.Slug))))
		})
	}
}

func TestSystemIsDeterministic(t *testing.T) {
	for _, m := range Modes() {
		if a, b := System(goldenOptions(m.Slug)), System(goldenOptions(m.Slug)); a != b {
			t.Errorf("System(%s) differs between two calls", m.Slug)
		}
	}
}

// The sections come in Roo Code's order, with the intent protocol after tool
// use, and each states what the mode makes true.
func TestSystemSections(t *testing.T) {
	order := []string{"MARKDOWN RULES", "TOOL USE", "INTENT PROTOCOL", "CAPABILITIES", "MODES", "RULES",
		"SYSTEM INFORMATION", "OBJECTIVE", "USER'S CUSTOM INSTRUCTIONS"}
	for _, m := range Modes() {
		t.Run(m.Slug, func(t *testing.T) {
			p := System(goldenOptions(m.Slug))
			if !strings.HasPrefix(p, m.RoleDefinition+"\n\n====\n\n") {
				t.Errorf("the prompt does not open with the role definition")
			}
			last := -1
			for _, title := range order {
				i := strings.Index(p, "====\n\n"+title+"\n\n")
				if i < 0 {
					t.Errorf("no %s section", title)
					continue
				}
				if i < last {
					t.Errorf("%s is out of order", title)
				}
				last = i
			}
			for _, want := range []string{
				IntentProtocol(),
				"The workspace root is /home/dev/project.",
				"Current Workspace Directory: /home/dev/project",
				"Operating System: Linux", "Default Shell: /bin/sh", "Home Directory: /home/dev",
				"- INT-001 [IN_PROGRESS] JWT authentication migration; owned_scope: src/auth/**, src/middleware/jwt.go",
				"Write comments and documentation in British English.",
				"You are in " + m.Name + " mode (" + m.Slug + ").",
			} {
				if !strings.Contains(p, want) {
					t.Errorf("the prompt does not contain %q", want)
				}
			}
			if m.Instructions != "" && !strings.Contains(p, "Mode-specific Instructions:\n"+m.Instructions) {
				t.Error("the mode's own instructions are missing")
			}
			// The tool list is exactly the mode's tools.
			line := "Tools available in " + m.Name + " mode: " + strings.Join(names(ForMode(m.Slug)), ", ") + "."
			if !strings.Contains(p, line) {
				t.Errorf("the prompt does not contain %q", line)
			}
			_, edits := m.Group("edit")
			if got := strings.Contains(p, "write_to_file for new files"); got != edits {
				t.Errorf("edit capabilities described = %v, mode edits = %v", got, edits)
			}
			_, commands := m.Group("command")
			if got := strings.Contains(p, "You can run commands with execute_command"); got != commands {
				t.Errorf("command capabilities described = %v, mode runs commands = %v", got, commands)
			}
		})
	}
	if p := System(goldenOptions("architect")); !strings.Contains(p, `In Architect mode you may change only files whose workspace path matches \.md$ (markdown files only)`) {
		t.Error("the architect prompt does not state its edit restriction")
	}
}

func TestSystemDefaultsAndFallbacks(t *testing.T) {
	code := System(goldenOptions("code"))
	if got := System(goldenOptions("")); got != code {
		t.Error("an empty mode is not the default mode")
	}
	if got := System(goldenOptions("no-such-mode")); got != code {
		t.Error("an unknown mode is not described as the default mode")
	}
	o := goldenOptions("code")
	o.CustomInstructions = ""
	if p := System(o); strings.Contains(p, "USER'S CUSTOM INSTRUCTIONS") {
		t.Error("a custom instructions section without any instructions")
	}
	o.Intents = nil
	if p := System(o); !strings.Contains(p, "No intents were listed with this prompt.") {
		t.Error("no word on the missing intent list")
	}
	// Values from a workspace file cannot break the prompt's layout.
	o.Intents = []Intent{{ID: "INT-9", Name: "two\nlines\n====", Status: "IN_PROGRESS", Scope: []string{"a/**"}}}
	if p := System(o); !strings.Contains(p, "- INT-9 [IN_PROGRESS] two lines ====; owned_scope: a/**\n") {
		t.Error("an intent name with line breaks is not kept on one line")
	}
	if p := System(SystemOptions{}); !strings.Contains(p, "Operating System: unknown") {
		t.Error("empty options do not say what is unknown")
	}
}

func TestWithHost(t *testing.T) {
	o := SystemOptions{}.WithHost()
	if o.OS == "" || o.Shell == "" {
		t.Errorf("WithHost() = %+v, want OS and Shell", o)
	}
	if want := commandShell(runtime.GOOS); o.Shell != want {
		t.Errorf("Shell = %q, want %q (the shell execute_command uses)", o.Shell, want)
	}
	if home, err := os.UserHomeDir(); err == nil && o.Home != home {
		t.Errorf("Home = %q, want %q", o.Home, home)
	}
	set := goldenOptions("code")
	if got := set.WithHost(); got.OS != set.OS || got.Shell != set.Shell || got.Home != set.Home {
		t.Errorf("WithHost() replaced given values: %+v", got)
	}
}

// No golden holds a path of the machine that wrote it.
func TestGoldensHoldNoLocalPaths(t *testing.T) {
	wd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile("testdata/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, local := range slices.DeleteFunc([]string{wd, home, os.TempDir()}, func(s string) bool { return len(s) < 2 }) {
			if strings.Contains(string(b), local) {
				t.Errorf("testdata/%s contains %s", e.Name(), local)
			}
		}
	}
}
