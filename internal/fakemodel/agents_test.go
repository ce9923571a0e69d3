package fakemodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// The agents' stand-in: a request that offers tools takes the next step, in
// the shape of the API it came to; one that offers none (a title, a
// summary) gets a short text and leaves the script alone.
func TestAgentServerPlaysStepsPerAPI(t *testing.T) {
	s, err := Start([]Step{
		{Tool: "Write", Input: map[string]any{"file_path": "a.txt"}},
		{Tool: "write_file", Input: map[string]any{"path": "b.txt"}},
		{Tool: "apply_patch", Raw: "*** Begin Patch"},
		{Text: "done"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	post := func(path, body string) string {
		t.Helper()
		r, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return string(b)
	}
	tools := `"tools":[{"name":"x"}]`
	if got := post("/v1/messages", `{"messages":[]}`); !strings.Contains(got, `"text":"ok"`) || s.Served() != 0 {
		t.Errorf("a side request: %s (served %d), want a short text and no step", got, s.Served())
	}
	got := post("/v1/messages", `{"stream":true,`+tools+`}`)
	if !strings.Contains(got, "event: content_block_start") || !strings.Contains(got, `"name":"Write"`) || !strings.Contains(got, `\"file_path\":\"a.txt\"`) {
		t.Errorf("anthropic stream: %s", got)
	}
	got = post("/v1beta/models/m:generateContent", `{"tools":[{"functionDeclarations":[{"name":"x"}]}]}`)
	var g struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					FunctionCall struct {
						Name string `json:"name"`
					} `json:"functionCall"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil || len(g.Candidates) != 1 || g.Candidates[0].Content.Parts[0].FunctionCall.Name != "write_file" {
		t.Errorf("gemini: %s (%v)", got, err)
	}
	if got := post("/v1/responses", `{`+tools+`}`); !strings.Contains(got, `"type":"custom_tool_call"`) || !strings.Contains(got, `"input":"*** Begin Patch"`) {
		t.Errorf("responses: %s", got)
	}
	got = post("/v1/chat/completions", `{`+tools+`}`)
	var c struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal([]byte(got), &c); err != nil || len(c.Choices) != 1 || c.Choices[0].Message.Content != "done" {
		t.Errorf("chat: %s (%v)", got, err)
	}
	if got := post("/v1/chat/completions", `{"stream":true,`+tools+`}`); !strings.Contains(got, "All done.") || !strings.HasSuffix(got, "data: [DONE]\n\n") {
		t.Errorf("after the script: %s, want All done. then [DONE]", got)
	}
	if n := len(s.Requests()); n != 6 {
		t.Errorf("%d requests recorded, want 6", n)
	}
}
