package prompts

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func compileSchema(t *testing.T, tool Tool) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.Schema))
	if err != nil {
		t.Fatalf("%s: %v", tool.Name, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "mem:///" + tool.Name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("%s: %v", tool.Name, err)
	}
	// Compiling validates the document against the 2020-12 metaschema.
	s, err := c.Compile(url)
	if err != nil {
		t.Fatalf("%s: %v", tool.Name, err)
	}
	return s
}

// schemaDoc is the part of a tool schema the checks below look at.
type schemaDoc struct {
	Schema               string                     `json:"$schema"`
	Title                string                     `json:"title"`
	Description          string                     `json:"description"`
	Type                 string                     `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties *bool                      `json:"additionalProperties"`
	Items                json.RawMessage            `json:"items"`
}

// checkObject checks an object schema, and the object schemas nested in it:
// closed, every required parameter declared, every parameter described.
func checkObject(t *testing.T, where string, raw json.RawMessage) {
	t.Helper()
	var d schemaDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if d.Type != "object" {
		t.Errorf("%s: type = %q, want object", where, d.Type)
	}
	if d.AdditionalProperties == nil || *d.AdditionalProperties {
		t.Errorf("%s: additionalProperties is not false", where)
	}
	for _, r := range d.Required {
		if _, ok := d.Properties[r]; !ok {
			t.Errorf("%s: required %q is not a property", where, r)
		}
	}
	for name, p := range d.Properties {
		var pd schemaDoc
		if err := json.Unmarshal(p, &pd); err != nil {
			t.Fatalf("%s.%s: %v", where, name, err)
		}
		if strings.TrimSpace(pd.Description) == "" {
			t.Errorf("%s.%s has no description", where, name)
		}
		switch pd.Type {
		case "string", "integer", "boolean":
		case "object":
			// A free-form object: an MCP tool's own arguments.
		case "array":
			var items schemaDoc
			if err := json.Unmarshal(pd.Items, &items); err != nil {
				t.Fatalf("%s.%s.items: %v", where, name, err)
			}
			if items.Type == "object" {
				checkObject(t, where+"."+name+"[]", pd.Items)
			}
		default:
			t.Errorf("%s.%s: type %q", where, name, pd.Type)
		}
	}
}

func TestSchemas(t *testing.T) {
	for _, tool := range Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			compileSchema(t, tool)
			var d schemaDoc
			if err := json.Unmarshal(tool.Schema, &d); err != nil {
				t.Fatal(err)
			}
			if d.Schema != "https://json-schema.org/draft/2020-12/schema" {
				t.Errorf("$schema = %q", d.Schema)
			}
			if d.Title != tool.Name {
				t.Errorf("title = %q, want %q", d.Title, tool.Name)
			}
			if strings.TrimSpace(tool.Description) == "" || tool.Description != d.Description {
				t.Errorf("Description = %q, schema description = %q", tool.Description, d.Description)
			}
			if !slices.Equal(tool.Required, d.Required) {
				t.Errorf("Required = %v, schema required = %v", tool.Required, d.Required)
			}
			// read_file takes path, files or args: one of them, so none is
			// required by the schema and the tool itself says which is missing.
			if len(tool.Required) == 0 && tool.Name != "read_file" {
				t.Error("no required parameter")
			}
			checkObject(t, tool.Name, tool.Schema)
			switch tool.Group {
			case "read", "edit", "command", "browser", "mcp", "modes":
			default:
				t.Errorf("Group = %q", tool.Group)
			}
		})
	}
}

// descriptionExamples returns the JSON examples a description shows, each on
// a line of its own, alone or after "Example: ".
func descriptionExamples(desc string) []string {
	var ex []string
	for _, line := range strings.Split(desc, "\n") {
		line = strings.TrimPrefix(line, "Example: ")
		if strings.HasPrefix(line, "{") {
			ex = append(ex, line)
		}
	}
	return ex
}

// The examples the model is shown are valid calls.
func TestDescriptionExamplesAreValid(t *testing.T) {
	for _, tool := range Tools() {
		t.Run(tool.Name, func(t *testing.T) {
			s := compileSchema(t, tool)
			ex := descriptionExamples(tool.Description)
			if len(ex) == 0 {
				t.Fatal("the description shows no example")
			}
			for _, e := range ex {
				inst, err := jsonschema.UnmarshalJSON(strings.NewReader(e))
				if err != nil {
					t.Errorf("example is not JSON: %v\n%s", err, e)
					continue
				}
				if err := s.Validate(inst); err != nil {
					t.Errorf("example does not validate: %v\n%s", err, e)
				}
			}
		})
	}
}

func TestParametersDropOnlyDescriptiveKeywords(t *testing.T) {
	for _, tool := range Tools() {
		var params, schema map[string]json.RawMessage
		if err := json.Unmarshal(tool.Parameters(), &params); err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		if err := json.Unmarshal(tool.Schema, &schema); err != nil {
			t.Fatal(err)
		}
		for _, k := range describedOnly {
			if _, ok := params[k]; ok {
				t.Errorf("%s: Parameters() keeps %q", tool.Name, k)
			}
			delete(schema, k)
		}
		if len(params) != len(schema) {
			t.Errorf("%s: Parameters() has %d keywords, the schema %d besides the descriptive ones", tool.Name, len(params), len(schema))
		}
	}
	// The order of the properties is kept: path comes first wherever there is one.
	for _, tool := range Tools() {
		p := string(tool.Parameters())
		if strings.Contains(p, `"path":`) && !strings.HasPrefix(p, `{"type":"object","properties":{"path":`) {
			t.Errorf("%s: Parameters() = %s, want path first", tool.Name, p)
		}
	}
	if got := string((Tool{Name: "x"}).Parameters()); got != `{"type":"object"}` {
		t.Errorf("Parameters() of a tool without schema = %s", got)
	}
}

func TestToolsReturnsCopies(t *testing.T) {
	a := Tools()
	a[0].Required[0] = "changed"
	a[0].Schema[0] = 'X'
	b := Tools()
	if b[0].Required[0] == "changed" || b[0].Schema[0] == 'X' {
		t.Error("Tools() shares its slices between callers")
	}
}

func names(tools []Tool) []string {
	n := make([]string, len(tools))
	for i, t := range tools {
		n[i] = t.Name
	}
	return n
}

func TestForMode(t *testing.T) {
	always := []string{"select_active_intent", "ask_followup_question", "attempt_completion", "switch_mode", "new_task", "update_todo_list"}
	read := []string{"select_active_intent", "read_file", "list_files", "search_files", "list_code_definition_names", "codebase_search", "fetch_instructions"}
	mcp := []string{"use_mcp_tool", "access_mcp_resource"}
	all := names(Tools())
	without := func(drop ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(drop, n) })
	}
	only := func(keep ...[]string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(n string) bool {
			for _, k := range keep {
				if slices.Contains(k, n) {
					return false
				}
			}
			return true
		})
	}
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"code", all},
		{"debug", all},
		{"architect", without("execute_command")},
		{"ask", only(read, []string{"browser_action"}, mcp, always)},
		{"orchestrator", only(always)},
		{"", all},             // no mode is the default mode
		{"no-such-mode", all}, // as in Roo Code, an unknown slug gets the default's tools
	} {
		if got := names(ForMode(tc.mode)); !slices.Equal(got, tc.want) {
			t.Errorf("ForMode(%q) = %v, want %v", tc.mode, got, tc.want)
		}
	}
}

func TestModes(t *testing.T) {
	var slugs []string
	for _, m := range Modes() {
		slugs = append(slugs, m.Slug)
		if m.Name == "" || m.RoleDefinition == "" || m.WhenToUse == "" {
			t.Errorf("mode %s lacks a name, role or when-to-use", m.Slug)
		}
	}
	if want := []string{"code", "architect", "ask", "debug", "orchestrator"}; !slices.Equal(slugs, want) {
		t.Errorf("Modes() = %v, want %v", slugs, want)
	}
	arch, ok := LookupMode("architect")
	if !ok {
		t.Fatal("no architect mode")
	}
	if g, ok := arch.Group("edit"); !ok || g.FileRegex != `\.md$` {
		t.Errorf("architect edit group = %+v, %v; want restricted to \\.md$", g, ok)
	}
	if _, ok := LookupMode("nope"); ok {
		t.Error("LookupMode(nope) found a mode")
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./prompts -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the output (run go test ./prompts -update and review the diff):\n%s", path, firstDiff(string(want), string(got)))
	}
}

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + wl + "\n  got: " + gl
		}
	}
	return ""
}

// canonical re-encodes JSON so that equal documents compare equal as strings.
func canonical(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "invalid JSON: " + err.Error()
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRenderersGolden(t *testing.T) {
	for _, tc := range []struct {
		golden string
		render func([]Tool) []byte
		check  func(t *testing.T, entry map[string]json.RawMessage) (name string, params json.RawMessage)
	}{
		{"tools-openai.golden", OpenAI, func(t *testing.T, e map[string]json.RawMessage) (string, json.RawMessage) {
			var typ string
			var fn struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			}
			if err := json.Unmarshal(e["type"], &typ); err != nil || typ != "function" {
				t.Errorf("type = %s, want function", e["type"])
			}
			if err := json.Unmarshal(e["function"], &fn); err != nil || fn.Description == "" {
				t.Errorf("function = %.80s...: %v", e["function"], err)
			}
			return fn.Name, fn.Parameters
		}},
		{"tools-anthropic.golden", Anthropic, func(t *testing.T, e map[string]json.RawMessage) (string, json.RawMessage) {
			var name, desc string
			_ = json.Unmarshal(e["name"], &name)
			_ = json.Unmarshal(e["description"], &desc)
			if desc == "" || len(e) != 3 {
				t.Errorf("entry %s has keys %d and description %q", name, len(e), desc)
			}
			return name, e["input_schema"]
		}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out := tc.render(Tools())
			checkGolden(t, tc.golden, out)
			var entries []map[string]json.RawMessage
			if err := json.Unmarshal(out, &entries); err != nil {
				t.Fatal(err)
			}
			tools := Tools()
			if len(entries) != len(tools) {
				t.Fatalf("%d entries for %d tools", len(entries), len(tools))
			}
			for i, e := range entries {
				name, params := tc.check(t, e)
				if name != tools[i].Name {
					t.Errorf("entry %d is %q, want %q", i, name, tools[i].Name)
				}
				if canonical(params) != canonical(tools[i].Parameters()) {
					t.Errorf("%s: rendered parameters differ from Parameters()", name)
				}
			}
			if got := string(tc.render(nil)); strings.TrimSpace(got) != "[]" {
				t.Errorf("rendering no tools = %q, want []", got)
			}
		})
	}
}
