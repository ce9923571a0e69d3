package orchestration

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestBuiltinModes(t *testing.T) {
	set := BuiltinModes()
	if got := set.Slugs(); !slices.Equal(got, []string{"code", "architect", "ask", "debug", "orchestrator"}) {
		t.Fatalf("slugs = %v", got)
	}
	for _, tc := range []struct {
		mode, group, path string
		want              bool
	}{
		{"code", "edit", "src/a.go", true},
		{"code", "command", "", true},
		{"architect", "edit", "docs/plan.md", true},
		{"architect", "edit", "src/a.go", false},
		{"architect", "edit", "notes.md.bak", false},
		{"architect", "read", "src/a.go", true},
		{"architect", "command", "", false},
		{"ask", "read", "src/a.go", true},
		{"ask", "edit", "README.md", false},
		{"debug", "command", "", true},
		{"orchestrator", "read", "src/a.go", false},
		{"orchestrator", "modes", "", false},
	} {
		m, ok := set.Get(tc.mode)
		if !ok {
			t.Fatalf("no mode %s", tc.mode)
		}
		g, ok := m.Group(tc.group)
		if got := ok && g.Allows(tc.path); got != tc.want {
			t.Errorf("%s may %s %q = %v, want %v", tc.mode, tc.group, tc.path, got, tc.want)
		}
	}
	if _, ok := set.Get(DefaultMode); !ok {
		t.Errorf("the default mode %q is not built in", DefaultMode)
	}
}

const customModes = `# Workspace modes
customModes:
  - slug: docs-writer
    name: Docs writer
    roleDefinition: You write documentation.
    whenToUse: For docs.
    groups:
      - read
      - - edit
        - fileRegex: \.(md|mdx)$
          description: Markdown only
    source: project
  - slug: ask
    name: Careful ask
    groups: [read]
`

func TestParseModes(t *testing.T) {
	set, err := ParseModes("modes.yaml", []byte(customModes))
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Slugs(); !slices.Equal(got, []string{"code", "architect", "ask", "debug", "orchestrator", "docs-writer"}) {
		t.Errorf("slugs = %v", got)
	}
	m, _ := set.Get("docs-writer")
	if m.Name != "Docs writer" || m.RoleDefinition != "You write documentation." || m.Line != 3 || m.Source != "modes.yaml" {
		t.Errorf("docs-writer = %+v", m)
	}
	g, ok := m.Group("edit")
	if !ok || !g.Allows("guide/intro.mdx") || g.Allows("main.go") || g.String() != `edit (files matching \.(md|mdx)$: Markdown only)` {
		t.Errorf("edit group = %+v (%s)", g, g)
	}
	if ask, _ := set.Get("ask"); ask.Name != "Careful ask" || len(ask.Groups) != 1 {
		t.Errorf("a custom mode does not replace the built-in one of its slug: %+v", ask)
	}
	for _, empty := range []string{"", "# nothing\n", "customModes:\n", "customModes: []\n", "~\n"} {
		set, err := ParseModes("modes.yaml", []byte(empty))
		if err != nil || len(set.Modes) != 5 {
			t.Errorf("ParseModes(%q) = %v, %v; want the built-in modes", empty, set, err)
		}
	}
}

func TestParseModesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string // each a line:col prefix and a fragment, in order
	}{
		{"not a mapping", "- a\n", []string{"modes.yaml:1:1: expected a mapping"}},
		{"unknown top-level field", "modes: []\n", []string{`modes.yaml:1:1: unknown top-level field "modes"`, "missing top-level key customModes"}},
		{"unknown field", "customModes:\n  - slug: a\n    name: A\n    groups: [read]\n    colour: red\n",
			[]string{`modes.yaml:5:5: unknown field "colour" in mode a`}},
		{"missing fields", "customModes:\n  - slug: a\n", []string{`modes.yaml:2:5: missing field "name" in mode a`, `modes.yaml:2:5: missing field "groups" in mode a`}},
		{"bad slug", "customModes:\n  - slug: a b\n    name: A\n    groups: []\n", []string{`modes.yaml:2:11: slug "a b" in mode #1 may contain only letters, digits and dashes`}},
		{"number as name", "customModes:\n  - slug: a\n    name: 12\n    groups: []\n", []string{"modes.yaml:3:11: name in mode a must be a string, got the number 12 (quote it to make it a string)"}},
		{"duplicate slug", "customModes:\n  - {slug: a, name: A, groups: []}\n  - {slug: a, name: B, groups: []}\n",
			[]string{`modes.yaml:3:12: duplicate mode slug "a" (first defined at line 2)`}},
		{"duplicate key", "customModes:\n  - slug: a\n    name: A\n    name: B\n    groups: []\n", []string{`modes.yaml:4:5: duplicate key "name" in mode a (first at line 3)`}},
		{"unknown group", "customModes:\n  - slug: a\n    name: A\n    groups: [read, write]\n", []string{`modes.yaml:4:20: unknown group "write" in mode a`}},
		{"duplicate group", "customModes:\n  - slug: a\n    name: A\n    groups: [read, read]\n", []string{`modes.yaml:4:20: duplicate group "read" in mode a`}},
		{"bad group shape", "customModes:\n  - slug: a\n    name: A\n    groups:\n      - [edit]\n", []string{"modes.yaml:5:9: a group in mode a must be a group name or a [name, {fileRegex, description}] pair"}},
		{"bad options", "customModes:\n  - slug: a\n    name: A\n    groups:\n      - [edit, {fileregex: x}]\n", []string{`modes.yaml:5:17: unknown field "fileregex" in the options of group edit in mode a`}},
		{"bad fileRegex", "customModes:\n  - slug: a\n    name: A\n    groups:\n      - [edit, {fileRegex: \"(?=x)\"}]\n", []string{`modes.yaml:5:28: fileRegex "(?=x)" in the options of group edit in mode a does not compile`}},
		{"bad source", "customModes:\n  - {slug: a, name: A, groups: [], source: mine}\n", []string{`modes.yaml:2:44: source "mine" in mode a must be global or project`}},
		{"alias", "customModes:\n  - &m {slug: a, name: A, groups: []}\n  - *m\n", []string{"modes.yaml:3:5: mode #2: YAML aliases are not supported"}},
		{"syntax", "customModes: [\n", []string{"modes.yaml:1: invalid YAML"}},
		{"two documents", "customModes: []\n---\ncustomModes: []\n", []string{"modes.yaml:2:1: a second YAML document is not allowed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := ParseModes("modes.yaml", []byte(tc.data))
			if set != nil || err == nil {
				t.Fatalf("ParseModes = %v, %v; want an error", set, err)
			}
			var errs ModesErrors
			if !errors.As(err, &errs) {
				t.Fatalf("error %T is not ModesErrors", err)
			}
			msg := err.Error()
			at := 0
			for _, w := range tc.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("error:\n%s\nlacks, in order, %q", msg, w)
				}
				at += i + len(w)
			}
		})
	}
}

func TestModeStore(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "modes.yaml")
	s := OpenModes(path)
	set, err := s.Current()
	if err != nil || len(set.Modes) != 5 {
		t.Fatalf("no file: %v, %v", set, err)
	}
	write := func(data string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("customModes: [\n")
	if set, err := s.Current(); err != nil || len(set.Modes) != 5 || s.Problem() == nil {
		t.Errorf("a broken file after none: %v, %v, problem %v; want the built-in modes kept and the problem reported", set, err, s.Problem())
	}
	fresh := OpenModes(path)
	if _, err := fresh.Current(); err == nil {
		t.Fatal("a broken file with no good version before it is accepted")
	}
	if name, ok := fresh.ModeName("code"); ok {
		t.Errorf("ModeName answers %q while the modes cannot be known", name)
	}
	write(customModes)
	if name, ok := s.ModeName("docs-writer"); !ok || name != "Docs writer" {
		t.Errorf("ModeName(docs-writer) = %q, %v", name, ok)
	}
	write("customModes: [\n")
	set, err = s.Current()
	if err != nil || !slices.Contains(set.Slugs(), "docs-writer") {
		t.Errorf("a bad edit does not keep the last good modes: %v, %v", set.Slugs(), err)
	}
	if s.Problem() == nil {
		t.Error("the bad edit is not reported")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if set, err := s.Current(); err != nil || slices.Contains(set.Slugs(), "docs-writer") || s.Problem() != nil {
		t.Errorf("after removal: %v, %v, problem %v", set.Slugs(), err, s.Problem())
	}
	if s.DefaultMode() != DefaultMode || len(s.ModeSlugs()) != 5 {
		t.Errorf("DefaultMode %q, slugs %v", s.DefaultMode(), s.ModeSlugs())
	}
}

func FuzzParseModes(f *testing.F) {
	f.Add([]byte(customModes))
	f.Add([]byte("customModes: []\n"))
	f.Add([]byte("customModes:\n  - {slug: a, name: A, groups: [read, [edit, {fileRegex: '\\.go$'}]]}\n"))
	f.Add([]byte("customModes:\n  - &x {slug: a, name: *x}\n"))
	f.Add([]byte("customModes: !!map {}\n"))
	f.Add([]byte("\ufeffcustomModes:\n  - slug: code\n    name: Mine\n    groups: [[edit, {fileRegex: '(', description: 1}]]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseModes("f.yaml", data)
		if err != nil {
			var errs ModesErrors
			if !errors.As(err, &errs) || len(errs) == 0 || set != nil {
				t.Fatalf("error %v (%T) with set %v", err, err, set)
			}
			for _, e := range errs {
				if e.File != "f.yaml" || e.Line < 0 || e.Column < 0 {
					t.Fatalf("error without a position: %+v", e)
				}
			}
			return
		}
		seen := map[string]bool{}
		for i := range set.Modes {
			m := &set.Modes[i]
			if !modesSlug().MatchString(m.Slug) || m.Name == "" || seen[m.Slug] {
				t.Fatalf("mode %d accepted: %+v", i, m)
			}
			seen[m.Slug] = true
			if got, ok := set.Get(m.Slug); !ok || got != m {
				t.Fatalf("Get(%q) is not mode %d", m.Slug, i)
			}
			groups := map[string]bool{}
			for _, g := range m.Groups {
				if !slices.Contains(ModeGroupNames, g.Name) || groups[g.Name] {
					t.Fatalf("group %q accepted in %s", g.Name, m.Slug)
				}
				groups[g.Name] = true
				if g.FileRegex != "" {
					if _, err := compileFileRegex(g.FileRegex); err != nil {
						t.Fatalf("fileRegex %q accepted: %v", g.FileRegex, err)
					}
				}
				g.Allows("src/a.go")
			}
		}
		for _, slug := range []string{"code", "architect", "ask", "debug", "orchestrator"} {
			if _, ok := set.Get(slug); !ok {
				t.Fatalf("built-in mode %s lost", slug)
			}
		}
	})
}
