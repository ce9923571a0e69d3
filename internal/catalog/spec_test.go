package catalog

import (
	"testing"

	"github.com/intentgate/intentgate/agent/mcphub"
	"github.com/intentgate/intentgate/internal/catalog/spec"
)

// Every constructor has a declaration (and TestSchemaFilesMatchTable checks
// that every declaration has a constructor); the MCP tools are declared
// under the names the hub answers to.
func TestConstructorsMatchDeclarations(t *testing.T) {
	declared := map[string]bool{}
	for _, d := range spec.Tools() {
		declared[d.Name] = true
	}
	for name := range constructors {
		if !declared[name] {
			t.Errorf("constructor for %s, which package spec does not declare", name)
		}
	}
	for _, name := range []string{mcphub.UseToolName, mcphub.AccessResourceName} {
		if !declared[name] {
			t.Errorf("package spec does not declare %s", name)
		}
	}
	if len(constructors) != len(spec.Tools()) {
		t.Errorf("%d constructors for %d declarations", len(constructors), len(spec.Tools()))
	}
}
