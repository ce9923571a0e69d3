package prompts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/intentgate/intentgate/internal/catalog"
)

// Tool is one tool as the model sees it.
type Tool struct {
	Name        string
	Description string
	// Schema is the tool's JSON Schema document as embedded, with "$schema",
	// "title" and "description"; Parameters is what goes to a model.
	Schema   json.RawMessage
	Required []string
	// Group is the tool's group as the engine's registry and the modes know
	// it: read, edit, command, browser, mcp or modes.
	Group string
	// Always: every mode has the tool, whatever its groups.
	Always bool
}

// Parameters returns the schema of the tool's arguments as function-calling
// APIs take it: the document without the keywords that only describe it
// ("$schema", "title", "description"), which would repeat the tool's name and
// description in every request.
func (t Tool) Parameters() json.RawMessage {
	if len(bytes.TrimSpace(t.Schema)) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	p, err := withoutKeys(t.Schema, describedOnly)
	if err != nil {
		// Not an object we can take apart: pass it on for the API to judge.
		return bytes.Clone(t.Schema)
	}
	return p
}

// describedOnly are the top-level keywords Parameters leaves out.
var describedOnly = []string{"$schema", "title", "description"}

var loadTools = sync.OnceValues(func() ([]Tool, error) {
	decls := catalog.Tools()
	tools := make([]Tool, 0, len(decls))
	for _, d := range decls {
		t, err := loadTool(d)
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
})

func loadTool(d catalog.Tool) (Tool, error) {
	name := d.Name
	file := "internal/catalog/schemas/" + name + ".json"
	raw, err := d.Schema()
	if err != nil {
		return Tool{}, err
	}
	var head struct {
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Required    []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return Tool{}, fmt.Errorf("%s: %w", file, err)
	}
	if head.Title != name {
		return Tool{}, fmt.Errorf("%s: title is %q, want %q", file, head.Title, name)
	}
	if _, err := withoutKeys(raw, describedOnly); err != nil {
		return Tool{}, fmt.Errorf("%s: %w", file, err)
	}
	return Tool{Name: name, Description: head.Description, Schema: raw,
		Required: head.Required, Group: string(d.Group), Always: d.Always}, nil
}

// Tools returns every tool intentgate offers, in a fixed order: intent
// selection, reading, editing, commands, then the tools of the conversation
// itself. The caller owns the slice.
func Tools() []Tool {
	tools, err := loadTools()
	if err != nil {
		// The files are embedded and checked by the tests: this is a build
		// that should never have been made.
		panic("prompts: " + err.Error())
	}
	out := make([]Tool, len(tools))
	for i, t := range tools {
		t.Schema = bytes.Clone(t.Schema)
		t.Required = slices.Clone(t.Required)
		out[i] = t
	}
	return out
}

// withoutKeys returns the JSON object raw without the given top-level keys,
// keeping the others in their order: property order is part of what a model
// reads, and a map would sort it away.
func withoutKeys(raw []byte, drop []string) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("schema is not a JSON object")
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if slices.Contains(drop, key) {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Compact(&out, b.Bytes()); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// OpenAI renders tools in the OpenAI function-calling dialect (Chat
// Completions "tools"): [{"type":"function","function":{"name",
// "description","parameters"}}].
func OpenAI(tools []Tool) []byte {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	out := make([]tool, len(tools))
	for i, t := range tools {
		out[i] = tool{Type: "function", Function: function{t.Name, t.Description, t.Parameters()}}
	}
	return render(out)
}

// Anthropic renders tools in the Anthropic Messages dialect:
// [{"name","description","input_schema"}].
func Anthropic(tools []Tool) []byte {
	type tool struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	out := make([]tool, len(tools))
	for i, t := range tools {
		out[i] = tool{t.Name, t.Description, t.Parameters()}
	}
	return render(out)
}

func render(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Descriptions quote <intent_context> and "<<<<<<< SEARCH" markers;
	// escaping them as \u003c would only make the JSON harder to read.
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		// Only our own structs and compacted, valid JSON go in.
		panic("prompts: " + err.Error())
	}
	return b.Bytes()
}
