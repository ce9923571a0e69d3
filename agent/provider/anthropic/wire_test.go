package anthropic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/intentgate/intentgate/agent/provider"
)

// sdkJSON is what the SDK sends for req, decoded.
func sdkJSON(t testing.TB, req *provider.Request) any {
	t.Helper()
	p, err := Params(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	v["stream"] = true // the SDK adds it to a streaming request
	return any(v)
}

func ownJSON(t testing.TB, req *provider.Request) any {
	t.Helper()
	bd, err := encode(req)
	if err != nil {
		t.Fatal(err)
	}
	b := bd.b
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("own encoding is not JSON: %v\n%s", err, b)
	}
	return v
}

func same(t testing.TB, req *provider.Request) {
	t.Helper()
	want, got := sdkJSON(t, req), ownJSON(t, req)
	if !reflect.DeepEqual(want, got) {
		w, _ := json.MarshalIndent(want, "", " ")
		g, _ := json.MarshalIndent(got, "", " ")
		t.Fatalf("own encoding differs from the SDK's:\nown: %s\nsdk: %s", g, w)
	}
}

var testTools = []provider.Tool{
	{Name: "read_file", Description: "Read <a> file & more", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
	{Name: "attempt_completion", Description: "done", Parameters: json.RawMessage(`{"properties":{"result":{"type":"string"}}}`)},
}

// TestEncodeMatchesSDK grows a conversation turn by turn with one cache, as
// a task does, and checks that every request body equals the SDK's encoding
// of the same request, cache breakpoints included; then the history is
// replaced by a shorter one (a condensed context) and the model changes.
func TestEncodeMatchesSDK(t *testing.T) {
	cache := &provider.Cache{}
	hist := []provider.Message{{Role: provider.User, Content: []provider.Block{
		{Type: provider.Text, Text: "<task>\nbuild \"it\" \\ now\u2028\x01 <b>&</b> \xff end\n</task>"},
		{Type: provider.Text, Text: "<environment_details>\n# Time\nnow\n</environment_details>"}}}}
	req := func(h []provider.Message) *provider.Request {
		return &provider.Request{Model: "claude-sonnet-4-5", System: "You are a tool user.\n\tRules: <none>", Messages: h, Tools: testTools, Cache: cache}
	}
	same(t, req(hist))
	for i := 0; i < 6; i++ {
		id := fmt.Sprintf("toolu_%d", i)
		input := json.RawMessage(fmt.Sprintf(`{ "path": "src/f%d.go",
		 "n": [1, 2] }`, i))
		switch i {
		case 3:
			input = json.RawMessage(`{"path": `) // malformed: sent as {}
		case 4:
			input = nil
		}
		hist = append(hist, provider.Message{Role: provider.Assistant, Content: []provider.Block{
			{Type: provider.Text, Text: fmt.Sprintf("Step %d.", i)},
			{Type: provider.ToolUse, ID: id, Name: "read_file", Input: input}}})
		same(t, req(hist))
		hist = append(hist, provider.Message{Role: provider.User, Content: []provider.Block{
			{Type: provider.ToolResult, ToolUseID: id, Content: fmt.Sprintf("line 1\nline \"%d\"", i), IsError: i%2 == 1, Images: images(i)},
			{Type: provider.Text, Text: "<environment_details>\nx\n</environment_details>"}}})
		same(t, req(hist))
	}
	short := append([]provider.Message{hist[0]}, hist[5:]...)
	same(t, req(short))
	r := req(short)
	r.Model, r.MaxTokens = "claude-opus-4-1", 1000
	same(t, r)
	r.Tools = nil
	same(t, r)
}

// images are the screenshots of step i: none, one, two, and a data URL that
// is not base64 (left out by both encoders).
func images(i int) []string {
	switch i % 4 {
	case 1:
		return []string{"data:image/png;base64,iVBORw0KGgo="}
	case 2:
		return []string{"data:image/png;base64,iVBORw0KGgo=", "data:image/webp;base64,UklGRg=="}
	case 3:
		return []string{"data:text/plain,hello"}
	}
	return nil
}

// FuzzEncodeMatchesSDK: whatever text and arguments a model or a file put
// into the history, the request body is valid JSON equal to the SDK's.
func FuzzEncodeMatchesSDK(f *testing.F) {
	f.Add("plain", `{"a":1}`, "result", true)
	f.Add("\x00\x1f\"\\<>&\u2028\u2029\xff\xfe", `{"a":"\u0000"}`, "\r\n\t", false)
	f.Add("", `null`, "", false)
	f.Add("ünïcødé 🙂", `[1,2]`, "x", true)
	f.Fuzz(func(t *testing.T, text, input, result string, isErr bool) {
		hist := []provider.Message{
			{Role: provider.User, Content: []provider.Block{{Type: provider.Text, Text: text}}},
			{Role: provider.Assistant, Content: []provider.Block{{Type: provider.Text, Text: text}, {Type: provider.ToolUse, ID: "t1", Name: text, Input: json.RawMessage(input)}}},
			{Role: provider.User, Content: []provider.Block{{Type: provider.ToolResult, ToolUseID: text, Content: result, IsError: isErr}}},
			{Role: provider.Assistant, Content: []provider.Block{{Type: provider.Text, Text: result}}},
			{Role: provider.User, Content: []provider.Block{{Type: provider.Text, Text: result}}},
		}
		req := &provider.Request{Model: text, System: result, Messages: hist, Tools: testTools}
		p, err := Params(req)
		if err != nil {
			t.Skip()
		}
		sb, err := json.Marshal(p)
		if err != nil {
			t.Skip() // the SDK cannot encode it either
		}
		var want any
		if err := json.Unmarshal(sb, &want); err != nil {
			t.Fatal(err)
		}
		want.(map[string]any)["stream"] = true
		// The SDK keeps a valid non-object input; the API takes objects
		// only, and the own encoder sends {} instead.
		if m, ok := want.(map[string]any); ok {
			blk := m["messages"].([]any)[1].(map[string]any)["content"].([]any)[1].(map[string]any)
			if _, isObj := blk["input"].(map[string]any); !isObj {
				blk["input"] = map[string]any{}
			}
		}
		if got := ownJSON(t, req); !reflect.DeepEqual(want, got) {
			t.Fatalf("differs:\nown: %v\nsdk: %v", got, want)
		}
	})
}
