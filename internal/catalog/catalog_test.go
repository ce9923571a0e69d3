package catalog_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/anchortest"
	"github.com/intentgate/intentgate/internal/catalog"
	"github.com/intentgate/intentgate/internal/gate"
	"github.com/intentgate/intentgate/orchestration"
	"github.com/intentgate/intentgate/prompts"
)

func TestMain(m *testing.M) { os.Exit(anchortest.Main(m, orchestration.AnchorDirEnv)) }

// Every schema file is declared and every declared tool has one, titled
// with its name.
func TestSchemaFilesMatchTable(t *testing.T) {
	var files []string
	err := fs.WalkDir(os.DirFS("schemas"), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimSuffix(p, ".json"))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range catalog.Tools() {
		names = append(names, tool.Name)
		raw, err := tool.Schema()
		if err != nil {
			t.Errorf("%s: %v", tool.Name, err)
			continue
		}
		var head struct {
			Title string `json:"title"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.Title != tool.Name {
			t.Errorf("schemas/%s.json: title %q (%v), want %q", tool.Name, head.Title, err, tool.Name)
		}
		if tool.New == nil {
			t.Errorf("%s has no constructor", tool.Name)
		}
	}
	slices.Sort(files)
	slices.Sort(names)
	if !slices.Equal(files, names) {
		t.Errorf("schemas/*.json = %v, declared = %v", files, names)
	}
}

// runtime is a governed workspace opened as every front door opens one,
// whose intent INT-001 owns src/**.
func runtime(t *testing.T) *gate.Runtime {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, ".orchestration", "active_intents.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "active_intents:\n  - id: INT-001\n    name: catalog\n    status: IN_PROGRESS\n    owned_scope: [\"src/**\"]\n"
	if err := os.WriteFile(p, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	rt, err := gate.Open(dir, gate.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// The registry the runtime routes calls with holds the declared tools,
// under their groups, and judges whether a call changes the workspace as the
// declaration says: by the group, or per call for an MCP tool, whose call to
// an unknown server counts as mutating.
func TestRegistryMatchesTable(t *testing.T) {
	reg := runtime(t).Registry()
	var names []string
	for _, decl := range catalog.Tools() {
		names = append(names, decl.Name)
		spec, ok := reg.Lookup(decl.Name)
		if !ok {
			t.Errorf("%s is declared but not registered", decl.Name)
			continue
		}
		if spec.Group != decl.Group {
			t.Errorf("%s: registry group %s, declared %s", decl.Name, spec.Group, decl.Group)
		}
		if spec.Tool == nil {
			t.Errorf("%s is registered without an implementation", decl.Name)
		}
		if spec.Mutating() != decl.Mutating() {
			t.Errorf("%s: registry Mutating() = %v, declared %v", decl.Name, spec.Mutating(), decl.Mutating())
		}
		c := &engine.Call{Tool: decl.Name, Args: json.RawMessage(`{"server_name":"nowhere","tool_name":"write"}`)}
		_, classifies := spec.Tool.(engine.Classifier)
		switch got := reg.MutatingCall(c); {
		case decl.Group == engine.GroupMCP && decl.Name == "use_mcp_tool":
			if !classifies || !got {
				t.Errorf("use_mcp_tool: classifies per call = %v, a call to an unknown server mutating = %v; want true, true", classifies, got)
			}
		case got != decl.Mutating():
			t.Errorf("%s: MutatingCall = %v, declared %v", decl.Name, got, decl.Mutating())
		}
	}
	slices.Sort(names)
	if got := reg.Names(); !slices.Equal(got, names) {
		t.Errorf("registered %v, declared %v", got, names)
	}
}

// What the model reads is the declaration: the same tools in the same order,
// the same groups and always-available flags, and each schema's description.
func TestPromptsMatchTable(t *testing.T) {
	decls := catalog.Tools()
	got := prompts.Tools()
	if len(got) != len(decls) {
		t.Fatalf("prompts.Tools() has %d tools, %d are declared", len(got), len(decls))
	}
	for i, decl := range decls {
		p := got[i]
		if p.Name != decl.Name || p.Group != string(decl.Group) || p.Always != decl.Always {
			t.Errorf("prompts.Tools()[%d] = %s/%s/always=%v, declared %s/%s/always=%v",
				i, p.Name, p.Group, p.Always, decl.Name, decl.Group, decl.Always)
		}
		raw, _ := decl.Schema()
		var head struct {
			Description string `json:"description"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.Description == "" || p.Description != head.Description {
			t.Errorf("%s: prompts description differs from the schema's (%v)", decl.Name, err)
		}
	}
	// Orchestrator mode has no group: it is offered exactly the tools every
	// mode has.
	var offered []string
	for _, p := range prompts.ForMode("orchestrator") {
		offered = append(offered, p.Name)
	}
	if want := catalog.Always(); !slices.Equal(offered, want) || len(want) == 0 {
		t.Errorf("orchestrator is offered %v, the always-available tools are %v", offered, want)
	}
}

// The mode policy lets through exactly the always-available tools in a mode
// without groups, and refuses every other tool with TOOL_NOT_ALLOWED.
func TestModePolicyMatchesTable(t *testing.T) {
	rt := runtime(t)
	call := func(tool string, args string) error {
		_, err := rt.Dispatch(context.Background(), &engine.Call{ID: "c-" + tool, Session: "s", Tool: tool, Args: json.RawMessage(args)})
		return err
	}
	if err := call("select_active_intent", `{"intent_id":"INT-001"}`); err != nil {
		t.Fatal(err)
	}
	if err := call("switch_mode", `{"mode_slug":"orchestrator","reason":"test"}`); err != nil {
		t.Fatal(err)
	}
	for _, decl := range catalog.Tools() {
		// No arguments: an allowed tool refuses for a missing parameter
		// (or runs), never for the mode.
		err := call(decl.Name, `{}`)
		d, denied := engine.AsDenial(err)
		refused := denied && d.Code == engine.ToolNotAllowed
		if refused == decl.Always {
			t.Errorf("%s (always = %v) in orchestrator mode: %v", decl.Name, decl.Always, err)
		}
		if refused && !strings.Contains(d.Message, strings.Join(catalog.Always(), ", ")) {
			t.Errorf("%s: the refusal does not list the always-available tools: %s", decl.Name, d.Message)
		}
	}
}
