package orchestration

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// yamlLines joins lines with "\n" so that a test's line numbers can be read
// off its source.
func yamlLines(lines ...string) string {
	return strings.Join(lines, "\n") + "\n"
}

const validIntents = `# Intents for the test suite.
active_intents:
  - id: INT-001
    name: JWT authentication migration
    status: IN_PROGRESS          # PENDING | IN_PROGRESS | BLOCKED | COMPLETED | ABANDONED
    owned_scope: ["src/auth/**", "src/middleware/jwt.go"]
    constraints: ["Must not add a dependency on an external identity provider"]
    acceptance_criteria: ["go test ./src/auth/... passes"]
  - id: INT-002
    name: Billing
    status: PENDING
    owned_scope:
      - billing/**
`

func TestParseIntents(t *testing.T) {
	set, err := ParseIntents("active_intents.yaml", []byte(validIntents))
	if err != nil {
		t.Fatalf("ParseIntents: %v", err)
	}
	want := []Intent{
		{
			ID:                 "INT-001",
			Name:               "JWT authentication migration",
			Status:             StatusInProgress,
			OwnedScope:         []string{"src/auth/**", "src/middleware/jwt.go"},
			Constraints:        []string{"Must not add a dependency on an external identity provider"},
			AcceptanceCriteria: []string{"go test ./src/auth/... passes"},
			Line:               3,
		},
		{
			ID:         "INT-002",
			Name:       "Billing",
			Status:     StatusPending,
			OwnedScope: []string{"billing/**"},
			Line:       9,
		},
	}
	if !reflect.DeepEqual(set.Intents, want) {
		t.Errorf("Intents = %+v, want %+v", set.Intents, want)
	}
	if got := set.IDs(); !reflect.DeepEqual(got, []string{"INT-001", "INT-002"}) {
		t.Errorf("IDs() = %v", got)
	}
	if in, ok := set.Get("INT-002"); !ok || in.Name != "Billing" {
		t.Errorf("Get(INT-002) = %v, %v", in, ok)
	}
	if _, ok := set.Get("INT-003"); ok {
		t.Errorf("Get(INT-003) found an intent")
	}
	if set.File != "active_intents.yaml" {
		t.Errorf("File = %q", set.File)
	}
}

func TestParseIntentsAccepts(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		ids  []string
	}{
		{"empty list", "active_intents: []\n", nil},
		{"null list", "active_intents:\n", nil},
		{"null optional lists", yamlLines(
			"active_intents:",
			"  - id: A",
			"    name: a",
			"    status: BLOCKED",
			"    owned_scope: ['**']",
			"    constraints:",
			"    acceptance_criteria: ~",
		), []string{"A"}},
		{"flow mapping", `active_intents: [{id: X, name: x, status: COMPLETED, owned_scope: ["{a,b}/*.go"]}]` + "\n", []string{"X"}},
		{"quoted number id", yamlLines(
			"active_intents:",
			`  - id: "7"`,
			"    name: '2024'",
			"    status: ABANDONED",
			"    owned_scope: [docs/*.md]",
		), []string{"7"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := ParseIntents("f.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatalf("ParseIntents: %v", err)
			}
			if got := set.IDs(); len(got) != len(tt.ids) || (len(got) > 0 && !reflect.DeepEqual(got, tt.ids)) {
				t.Errorf("IDs() = %v, want %v", got, tt.ids)
			}
		})
	}
}

func TestParseIntentsNFC(t *testing.T) {
	// "e" + combining acute (NFD) in the file; "é" precomposed (NFC) after loading.
	data := yamlLines(
		"active_intents:",
		"  - id: INT-1",
		"    name: cafe",
		"    status: IN_PROGRESS",
		"    owned_scope: [\"src/cafe\u0301/**\"]",
	)
	set, err := ParseIntents("f.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := set.Get("INT-1")
	if got, want := in.OwnedScope[0], "src/caf\u00e9/**"; got != want {
		t.Errorf("OwnedScope[0] = %q, want NFC %q", got, want)
	}
	for _, rel := range []string{"src/caf\u00e9/a.go", "src/cafe\u0301/a.go"} {
		if ok, _, err := in.Owns(rel); !ok || err != nil {
			t.Errorf("Owns(%q) = %v, %v, want true", rel, ok, err)
		}
	}
}

// intentBase is a valid intent at lines 2-5; cases append to it or replace it.
var intentBase = []string{
	"active_intents:",
	"  - id: INT-001",
	"    name: JWT",
	"    status: IN_PROGRESS",
	"    owned_scope: [\"src/auth/**\"]",
}

func TestParseIntentsErrors(t *testing.T) {
	type pos struct {
		line, col int
		msg       string // a substring of the message
	}
	tests := []struct {
		name string
		yaml string
		want []pos
	}{
		{"unknown field", yamlLines(append(intentBase,
			"  - id: INT-002",
			"    scope: src/**",
			"    name: Billing",
			"    status: PENDING",
			"    owned_scope: [\"billing/**\"]",
		)...), []pos{{7, 5, `unknown field "scope" in intent INT-002 (known fields: id, name, status, owned_scope, constraints, acceptance_criteria)`}}},
		{"unknown top-level field", yamlLines(append([]string{"intents: []"}, intentBase...)...),
			[]pos{{1, 1, `unknown top-level field "intents" (known fields: active_intents)`}}},
		{"duplicate id", yamlLines(append(intentBase,
			"  - id: INT-001",
			"    name: Again",
			"    status: PENDING",
			"    owned_scope: [b/**]",
		)...), []pos{{6, 9, `duplicate id "INT-001" (first defined at line 2)`}}},
		{"missing id", yamlLines(
			"active_intents:",
			"  - name: JWT",
			"    status: IN_PROGRESS",
			"    owned_scope: [a]",
		), []pos{{2, 5, `missing field "id" in intent #1`}}},
		{"missing name and status", yamlLines(
			"active_intents:",
			"  - id: INT-001",
			"    owned_scope: [a]",
		), []pos{{2, 5, `missing field "name" in intent INT-001`}, {2, 5, `missing field "status" in intent INT-001`}}},
		{"missing owned_scope", yamlLines(
			"active_intents:",
			"  - id: INT-001",
			"    name: JWT",
			"    status: PENDING",
		), []pos{{2, 5, `missing field "owned_scope" in intent INT-001`}}},
		{"empty owned_scope", yamlLines(
			"active_intents:",
			"  - id: INT-001",
			"    name: JWT",
			"    status: PENDING",
			"    owned_scope: []",
		), []pos{{5, 18, `empty owned_scope in intent INT-001`}}},
		{"owned_scope without value", yamlLines(
			"active_intents:",
			"  - id: INT-001",
			"    name: JWT",
			"    status: PENDING",
			"    owned_scope:",
		), []pos{{5, 5, `empty owned_scope in intent INT-001`}}},
		{"bad globs", yamlLines(
			"active_intents:",
			"  - id: INT-001",
			"    name: JWT",
			"    status: PENDING",
			"    owned_scope:",
			"      - src/[",
			"      - src/../etc/**",
			"      - /etc/**",
			`      - 'src\auth\**'`,
			"      - C:/x/**",
			"      - '{..,src}/x'",
			"      - ./src/**",
			"      - src//a",
			"      - src/",
			`      - ""`,
			"      - src/ok/**",
		), []pos{
			{6, 9, `invalid glob "src/[" in owned_scope of intent INT-001`},
			{7, 9, `glob "src/../etc/**" contains a ".." segment`},
			{8, 9, `glob "/etc/**" is absolute`},
			{9, 9, `glob "src\\auth\\**" contains a backslash`},
			{10, 9, `glob "C:/x/**" is absolute`},
			{11, 9, `glob "{..,src}/x" contains a ".." segment`},
			{12, 9, `glob "./src/**" contains a "." segment`},
			{13, 9, `glob "src//a" contains an empty segment`},
			{14, 9, `glob "src/" ends with a slash (write "src/**" to own a directory)`},
			{15, 9, `empty entry of owned_scope in intent INT-001`},
		}},
		{"unknown status", yamlLines(
			"active_intents:",
			"  - id: INT-001",
			"    name: JWT",
			"    status: DONE",
			"    owned_scope: [a]",
		), []pos{{4, 13, `unknown status "DONE" in intent INT-001 (allowed: PENDING, IN_PROGRESS, BLOCKED, COMPLETED, ABANDONED)`}}},
		{"lowercase status", yamlLines(
			"active_intents:",
			"  - id: INT-001",
			"    name: JWT",
			"    status: in_progress",
			"    owned_scope: [a]",
		), []pos{{4, 13, `unknown status "in_progress"`}}},
		{"wrong types", yamlLines(
			"active_intents:",
			"  - id: 7",
			"    name: [JWT]",
			"    status: true",
			"    owned_scope: src/**",
			"    constraints: {a: b}",
			"    acceptance_criteria: [ok, 3]",
		), []pos{
			{2, 9, `id in intent #1 must be a string, got the number 7 (quote it`},
			{3, 11, `name in intent #1 must be a string, got a list`},
			{4, 13, `status in intent #1 must be a string, got the boolean true`},
			{5, 18, `owned_scope in intent #1 must be a list of strings, got the string "src/**"`},
			{6, 18, `constraints in intent #1 must be a list of strings, got a mapping`},
			{7, 31, `entry of acceptance_criteria in intent #1 must be a string, got the number 3`},
		}},
		{"intent not a mapping", yamlLines(
			"active_intents:",
			"  - INT-001",
		), []pos{{2, 5, `intent #1 must be a mapping`}}},
		{"active_intents not a list", "active_intents: {id: x}\n",
			[]pos{{1, 17, `active_intents must be a list of intents, got a mapping`}}},
		{"duplicate key", yamlLines(
			"active_intents:",
			"  - id: INT-001",
			"    name: JWT",
			"    status: PENDING",
			"    name: Other",
			"    owned_scope: [a]",
		), []pos{{5, 5, `duplicate key "name" in intent INT-001 (first at line 3)`}}},
		{"duplicate top-level key", yamlLines(
			"active_intents: []",
			"active_intents: []",
		), []pos{{2, 1, `duplicate key "active_intents" at the top level (first at line 1)`}}},
		{"empty id", yamlLines(
			"active_intents:",
			`  - id: ""`,
			"    name: JWT",
			"    status: PENDING",
			"    owned_scope: [a]",
		), []pos{{2, 9, `empty id in intent #1`}}},
		{"id with space", yamlLines(
			"active_intents:",
			`  - id: "INT 1"`,
			"    name: JWT",
			"    status: PENDING",
			"    owned_scope: [a]",
		), []pos{{2, 9, `contains whitespace or control characters`}}},
		{"empty file", "", []pos{{1, 1, `file is empty`}}},
		{"only comments", "# nothing here\n", []pos{{1, 1, `file is empty`}}},
		{"missing active_intents", "{}\n", []pos{{1, 1, `missing top-level key active_intents`}}},
		{"top level is a list", "- id: x\n", []pos{{1, 1, `expected a mapping with the key active_intents at the top level, got a list`}}},
		{"alias", yamlLines(
			"base: &b [a]",
			"active_intents: *b",
		), []pos{{1, 1, `unknown top-level field "base"`}, {2, 17, `YAML aliases are not supported`}}},
		{"second document", yamlLines(
			"active_intents: []",
			"---",
			"active_intents: []",
		), []pos{{2, 1, `a second YAML document is not allowed`}}},
		{"syntax error", yamlLines(
			"active_intents:",
			"\t- id: x",
		), []pos{{2, 0, `invalid YAML: found character that cannot start any token`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseIntents("active_intents.yaml", []byte(tt.yaml))
			var errs IntentsErrors
			if !errors.As(err, &errs) {
				t.Fatalf("ParseIntents error = %v (%T), want IntentsErrors", err, err)
			}
			if len(errs) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tt.want), err)
			}
			for i, w := range tt.want {
				e := errs[i]
				if e.File != "active_intents.yaml" || e.Line != w.line || e.Column != w.col || !strings.Contains(e.Msg, w.msg) {
					t.Errorf("error %d = %q, want %d:%d containing %q", i, e.Error(), w.line, w.col, w.msg)
				}
				prefix := fmt.Sprintf("active_intents.yaml:%d:%d: ", w.line, w.col)
				if w.col == 0 {
					prefix = fmt.Sprintf("active_intents.yaml:%d: ", w.line)
				}
				if !strings.HasPrefix(e.Error(), prefix) {
					t.Errorf("Error() = %q, want prefix %q", e.Error(), prefix)
				}
			}
		})
	}
}

func TestIntentsErrorsFormat(t *testing.T) {
	data := yamlLines(
		"active_intents:",
		"  - id: INT-002",
		"    scope: x",
		"    name: n",
		"    status: DONE",
		"    owned_scope: [a]",
	)
	_, err := ParseIntents("active_intents.yaml", []byte(data))
	want := `active_intents.yaml:3:5: unknown field "scope" in intent INT-002 (known fields: id, name, status, owned_scope, constraints, acceptance_criteria)` + "\n" +
		`active_intents.yaml:5:13: unknown status "DONE" in intent INT-002 (allowed: PENDING, IN_PROGRESS, BLOCKED, COMPLETED, ABANDONED)`
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%v\nwant\n%s", err, want)
	}
	var one *IntentsError
	if !errors.As(err, &one) || one.Line != 3 {
		t.Errorf("errors.As(*IntentsError) = %v", one)
	}
}

func TestLoadIntents(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "active_intents.yaml")
	if _, err := LoadIntents(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadIntents(missing) = %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(path, []byte("active_intents: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadIntents(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":1:17: ") {
		t.Errorf("LoadIntents(bad) = %v, want error naming %s:1:17", err, path)
	}
	if err := os.WriteFile(path, []byte(validIntents), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := LoadIntents(path)
	if err != nil || len(set.Intents) != 2 || set.File != path {
		t.Errorf("LoadIntents(good) = %+v, %v", set, err)
	}
}

func TestOwns(t *testing.T) {
	in := &Intent{ID: "INT-001", OwnedScope: []string{"src/auth/**", "src/middleware/jwt.go", "docs/*.md"}}
	tests := []struct {
		rel     string
		ok      bool
		glob    string
		wantErr bool
	}{
		{"src/auth/login.go", true, "src/auth/**", false},
		{"src/auth/deep/er/x.go", true, "src/auth/**", false},
		{"src/auth", true, "src/auth/**", false},
		{"src/middleware/jwt.go", true, "src/middleware/jwt.go", false},
		{"docs/a.md", true, "docs/*.md", false},
		{"docs/sub/a.md", false, "", false},
		{"src/middleware/other.go", false, "", false},
		{"src/auth-old/x.go", false, "", false},
		{"src/authx", false, "", false},
		{"SRC/auth/x.go", false, "", false},
		{"src/billing/tax.go", false, "", false},
		{"src/auth/../../etc/passwd", false, "", true},
		{"src/auth/./x.go", false, "", true},
		{"src/auth//x.go", false, "", true},
		{"src/auth/", false, "", true},
		{"/src/auth/x.go", false, "", true},
		{"C:/src/auth/x.go", false, "", true},
		{`src\auth\x.go`, false, "", true},
		{"src/auth/a.go\x00.txt", false, "", true},
		{"", false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			ok, glob, err := in.Owns(tt.rel)
			if ok != tt.ok || glob != tt.glob || (err != nil) != tt.wantErr {
				t.Errorf("Owns(%q) = %v, %q, %v; want %v, %q, error %v", tt.rel, ok, glob, err, tt.ok, tt.glob, tt.wantErr)
			}
		})
	}
	t.Run("bad glob", func(t *testing.T) {
		bad := &Intent{ID: "X", OwnedScope: []string{"src/["}}
		if ok, _, err := bad.Owns("src/a"); ok || err == nil {
			t.Errorf("Owns with invalid glob = %v, %v; want false and an error", ok, err)
		}
	})
	t.Run("nil", func(t *testing.T) {
		var none *Intent
		if _, _, err := none.Owns("a"); err == nil {
			t.Error("nil intent Owns: want error")
		}
	})
}

func TestSetIntentStatus(t *testing.T) {
	const commented = `# Team intents. Keep this comment.
active_intents:
  # The auth work.
  - id: INT-001   # trailing comment
    name: JWT authentication migration

    status: IN_PROGRESS   # being worked on
    owned_scope: ["src/auth/**",   "src/middleware/jwt.go"]  # flow style, odd spacing
  - id: INT-002
    name: "Billing"
    status: "PENDING"
    owned_scope:
      - billing/**   # block style
  - {id: "ÎNT-3", name: "café ünïcode", status: 'BLOCKED', owned_scope: [x/**]}
# Foot comment.
`
	tests := []struct {
		name     string
		data     string
		id       string
		st       Status
		old, new string // the only change expected, as a substring replacement
	}{
		{"plain", commented, "INT-001", StatusCompleted, "status: IN_PROGRESS   #", "status: COMPLETED   #"},
		{"double quoted", commented, "INT-002", StatusInProgress, `status: "PENDING"`, `status: "IN_PROGRESS"`},
		{"single quoted in flow mapping after non-ASCII", commented, "ÎNT-3", StatusAbandoned, `status: 'BLOCKED'`, `status: 'ABANDONED'`},
		{"CRLF", strings.ReplaceAll(commented, "\n", "\r\n"), "INT-002", StatusBlocked, `status: "PENDING"`, `status: "BLOCKED"`},
		{"BOM", "\ufeff" + commented, "INT-001", StatusPending, "status: IN_PROGRESS", "status: PENDING"},
		{"unchanged", commented, "INT-001", StatusInProgress, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "active_intents.yaml")
			if err := os.WriteFile(path, []byte(tt.data), 0o640); err != nil {
				t.Fatal(err)
			}
			if err := SetIntentStatus(path, tt.id, tt.st); err != nil {
				t.Fatalf("SetIntentStatus: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(tt.data, tt.old, tt.new, 1)
			if string(got) != want {
				t.Errorf("file after SetIntentStatus =\n%s\nwant\n%s", got, want)
			}
			set, err := LoadIntents(path)
			if err != nil {
				t.Fatal(err)
			}
			if in, _ := set.Get(tt.id); in.Status != tt.st {
				t.Errorf("status of %s = %s, want %s", tt.id, in.Status, tt.st)
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("mode after SetIntentStatus = %v, %v; want 0640", fi.Mode(), err)
			}
			if _, err := os.Stat(filepath.Join(dir, ".intents.lock")); err != nil {
				t.Errorf("lock file: %v", err)
			}
		})
	}

	t.Run("tagged status is re-encoded", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "active_intents.yaml")
		data := yamlLines(
			"# Keep me.",
			"active_intents:",
			"  - id: INT-001 # the id",
			"    name: JWT",
			"    status: !!str PENDING",
			"    owned_scope: [src/**]",
		)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := SetIntentStatus(path, "INT-001", StatusInProgress); err != nil {
			t.Fatalf("SetIntentStatus: %v", err)
		}
		got, _ := os.ReadFile(path)
		for _, s := range []string{"# Keep me.", "# the id", "status: IN_PROGRESS"} {
			if !strings.Contains(string(got), s) {
				t.Errorf("re-encoded file lacks %q:\n%s", s, got)
			}
		}
	})

	errTests := []struct {
		name string
		data string
		id   string
		st   Status
		want string
	}{
		{"unknown status", commented, "INT-001", "DONE", `unknown status "DONE"`},
		{"unknown id", commented, "INT-009", StatusCompleted, `no intent "INT-009"`},
		{"invalid file", "active_intents:\n  - id: X\n", "X", StatusCompleted, `active_intents.yaml:2:5: missing field "name"`},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "active_intents.yaml")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			err := SetIntentStatus(path, tt.id, tt.st)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("SetIntentStatus = %v, want error containing %q", err, tt.want)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.data {
				t.Errorf("file changed after a failed SetIntentStatus:\n%s", got)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		err := SetIntentStatus(filepath.Join(t.TempDir(), "active_intents.yaml"), "X", StatusCompleted)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("SetIntentStatus(missing) = %v, want fs.ErrNotExist", err)
		}
	})
}

func FuzzParseIntents(f *testing.F) {
	f.Add([]byte(validIntents))
	f.Add([]byte("active_intents: []\n"))
	f.Add([]byte("active_intents:\n  - {id: A, name: a, status: PENDING, owned_scope: ['{a,b}/**']}\n  - {id: A, name: b, status: DONE, owned_scope: []}\n"))
	f.Add([]byte("active_intents:\n  - id: &x INT\n    name: *x\n    status: BLOCKED\n    owned_scope: [\"src/cafe\u0301/**\", '../x', 'a\\b']\n"))
	f.Add([]byte("a: b\n---\nc: [d\n"))
	f.Add([]byte("\ufeffactive_intents: !!seq []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := ParseIntents("f.yaml", data)
		if err != nil {
			var errs IntentsErrors
			if !errors.As(err, &errs) || len(errs) == 0 {
				t.Fatalf("error %v (%T) is not a non-empty IntentsErrors", err, err)
			}
			if set != nil {
				t.Fatalf("got a set along with an error")
			}
			return
		}
		seen := make(map[string]bool)
		for i := range set.Intents {
			in := &set.Intents[i]
			if in.ID == "" || in.Name == "" {
				t.Fatalf("intent %d has an empty id or name: %+v", i, in)
			}
			if seen[in.ID] {
				t.Fatalf("duplicate id %q accepted", in.ID)
			}
			seen[in.ID] = true
			if got, ok := set.Get(in.ID); !ok || got != in {
				t.Fatalf("Get(%q) does not return intent %d", in.ID, i)
			}
			if !intentsValidStatus(in.Status) {
				t.Fatalf("invalid status %q accepted", in.Status)
			}
			if len(in.OwnedScope) == 0 {
				t.Fatalf("empty owned_scope accepted for %q", in.ID)
			}
			for _, g := range in.OwnedScope {
				if !doublestar.ValidatePattern(g) || intentsGlobProblem(g) != "" {
					t.Fatalf("invalid glob %q accepted", g)
				}
				for _, seg := range strings.Split(g, "/") {
					if seg == ".." {
						t.Fatalf("glob %q with .. accepted", g)
					}
				}
				if strings.HasPrefix(g, "/") || strings.ContainsRune(g, '\\') {
					t.Fatalf("absolute or backslashed glob %q accepted", g)
				}
			}
			if _, _, err := in.Owns("src/a.go"); err != nil {
				t.Fatalf("Owns failed on an accepted intent: %v", err)
			}
		}
	})
}
