package agent

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/intentgate/intentgate/agent/provider"
	"github.com/intentgate/intentgate/agent/provider/anthropic"
	"github.com/intentgate/intentgate/agent/provider/openai"
	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/internal/fakemodel"
)

// shotRuntime plays browser_action: every action returns a screenshot.
type shotRuntime struct{}

const shot = "data:image/png;base64,iVBORw0KGgo="

func (shotRuntime) DispatchApproved(ctx context.Context, c *engine.Call, approve engine.Approve) (*engine.Result, error) {
	if approve != nil {
		if err := approve(ctx, c); err != nil {
			return nil, err
		}
	}
	return &engine.Result{Output: "The browser action has been executed.", Data: map[string]any{"images": []string{shot}}}, nil
}

// A browser launch is asked as browser_action_launch (the url as its text);
// a click of the launched browser is not asked. Each screenshot reaches the
// model with the tool_result: an image block inside Anthropic's
// tool_result, an image_url part of a user message after OpenAI's tool
// message (a tool message carries text only).
func TestBrowserLaunchAskAndScreenshots(t *testing.T) {
	for _, proto := range []string{"anthropic", "openai"} {
		t.Run(proto, func(t *testing.T) {
			fake := fakemodel.New(
				fakemodel.Turn{Calls: []fakemodel.Call{{ID: "b1", Name: "browser_action", Args: `{"action":"launch","url":"http://localhost:8080/"}`}}},
				fakemodel.Turn{Calls: []fakemodel.Call{{ID: "b2", Name: "browser_action", Args: `{"action":"click","coordinate":"10,20"}`}}},
				fakemodel.Turn{Calls: []fakemodel.Call{{ID: "c1", Name: "attempt_completion", Args: `{"result":"clicked"}`}}})
			srv := httptest.NewServer(fake)
			defer srv.Close()
			var prov provider.Provider = anthropic.New(anthropic.Options{APIKey: "k", BaseURL: srv.URL})
			if proto == "openai" {
				prov = openai.New(openai.Options{APIKey: "k", BaseURL: srv.URL + "/v1"})
			}
			var (
				mu   sync.Mutex
				asks []string
				task *Task
			)
			auto, _ := ParseAutoApprove("read")
			task = New("click the button", Options{
				Provider: prov, Model: "m", Runtime: shotRuntime{}, Workspace: t.TempDir(), AutoApprove: auto,
				OnEvent: func(e Event) {
					if e.Name != EventWaitingForInput {
						return
					}
					mu.Lock()
					ms := task.Messages()
					asks = append(asks, string(e.State.Ask)+" "+ms[len(ms)-1].Text)
					mu.Unlock()
					go task.Respond(Answer{Response: YesButtonClicked})
				},
				System: func(string) string { return "system" },
				Tools:  func(string) []provider.Tool { return nil },
			})
			res, err := task.Run(context.Background())
			if err != nil || res.Outcome != Completed {
				t.Fatalf("run: %v %+v", err, res)
			}
			mu.Lock()
			if got := strings.Join(asks, "|"); got != "browser_action_launch http://localhost:8080/|completion_result " {
				t.Errorf("asks %q", got)
			}
			mu.Unlock()
			reqs := fake.Requests()
			if len(reqs) != 3 {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, id := range []string{"b1", "b2"} {
				var body struct {
					Messages []struct {
						Role       string          `json:"role"`
						ToolCallID string          `json:"tool_call_id"`
						Content    json.RawMessage `json:"content"`
					} `json:"messages"`
				}
				if err := json.Unmarshal(reqs[i+1].Body, &body); err != nil {
					t.Fatal(err)
				}
				ms := body.Messages
				if proto == "anthropic" {
					var blocks []struct {
						Type      string `json:"type"`
						ToolUseID string `json:"tool_use_id"`
						Content   []struct {
							Type   string `json:"type"`
							Text   string `json:"text"`
							Source struct {
								Type, MediaType, Data string
							} `json:"source"`
						} `json:"content"`
					}
					json.Unmarshal(ms[len(ms)-1].Content, &blocks)
					var raw []map[string]any
					json.Unmarshal(ms[len(ms)-1].Content, &raw)
					src, _ := json.Marshal(raw[0]["content"])
					if len(blocks) == 0 || blocks[0].Type != "tool_result" || blocks[0].ToolUseID != id || len(blocks[0].Content) != 2 ||
						blocks[0].Content[0].Type != "text" || blocks[0].Content[1].Type != "image" ||
						!strings.Contains(string(src), `"source":{"data":"iVBORw0KGgo=","media_type":"image/png","type":"base64"}`) {
						t.Errorf("request %d, last user message: %s", i+1, ms[len(ms)-1].Content)
					}
					continue
				}
				// OpenAI: the tool message, then a user message with the image.
				n := len(ms)
				tool, user := ms[n-2], ms[n-1]
				var parts []map[string]any
				json.Unmarshal(user.Content, &parts)
				if tool.Role != "tool" || tool.ToolCallID != id || user.Role != "user" || len(parts) == 0 {
					t.Fatalf("request %d ends %+v %+v", i+1, tool, user)
				}
				last := parts[len(parts)-1]
				if url, _ := last["image_url"].(map[string]any); last["type"] != "image_url" || url["url"] != shot {
					t.Errorf("request %d, user parts %s", i+1, user.Content)
				}
			}
		})
	}
}
