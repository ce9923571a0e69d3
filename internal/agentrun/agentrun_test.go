package agentrun

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/intentgate/intentgate/agent"
)

// Mistakes in what the person asked for are usage errors that say what to
// do, found before any workspace is opened or model asked.
func TestRunUsageErrors(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	for _, tc := range []struct {
		name string
		o    Options
		says string
	}{
		{"format", Options{Output: "yaml", Model: Model{Provider: "openai"}}, `--output-format "yaml"`},
		{"group", Options{Output: "text", AutoApprove: "read,everything"}, `unknown auto-approval group "everything"`},
		{"anthropic key", Options{Output: "text", Model: Model{Provider: "anthropic"}}, "ANTHROPIC_API_KEY is not set"},
		{"openai key", Options{Output: "json", Model: Model{Provider: "openai"}}, "OPENAI_API_KEY is not set"},
		{"provider", Options{Output: "text", Model: Model{Provider: "gemini"}}, `--provider "gemini"`},
		{"workspace", Options{Output: "text", Workspace: t.TempDir(), Model: Model{Provider: "openai", BaseURL: "http://127.0.0.1:1"}}, "intentgate init"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errw strings.Builder
			res, err := Run(t.Context(), tc.o, "task", strings.NewReader(""), &out, &errw)
			var ue *UsageError
			if res != nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Run = %v, %v; want a usage error saying %q", res, err, tc.says)
			}
			if out.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
		})
	}
}

func TestParseAnswer(t *testing.T) {
	for _, tc := range []struct {
		line string
		tty  bool
		want agent.Answer
	}{
		{"y", true, agent.Answer{Response: agent.YesButtonClicked}},
		{"no", true, agent.Answer{Response: agent.NoButtonClicked}},
		{"y: but use port 8080", true, agent.Answer{Response: agent.YesButtonClicked, Text: "but use port 8080"}},
		{"use port 8080", true, agent.Answer{Response: agent.MessageResponse, Text: "use port 8080"}},
		{`{"type":"askResponse","askResponse":"noButtonClicked","text":"x"}`, false, agent.Answer{Response: agent.NoButtonClicked, Text: "x"}},
	} {
		got, err := parseAnswer(tc.line, tc.tty)
		if err != nil || got.Response != tc.want.Response || got.Text != tc.want.Text {
			t.Errorf("parseAnswer(%q, %v) = %+v, %v; want %+v", tc.line, tc.tty, got, err, tc.want)
		}
	}
	// Off a terminal, every line must be JSON: "y" is no answer.
	if _, err := parseAnswer("y", false); err == nil {
		t.Error(`parseAnswer("y", false) succeeded`)
	}
}

// terminalOperation reads only {"type":"terminalOperation",...} lines: an
// askResponse line, or anything else, is never taken for one.
func FuzzTerminalOperation(f *testing.F) {
	f.Add(`{"type":"terminalOperation","terminalOperation":"continue"}`)
	f.Add(`{"type":"terminalOperation","terminalOperation":"abort"}`)
	f.Add(`{"type":"askResponse","askResponse":"yesButtonClicked","text":"terminalOperation"}`)
	f.Add(`terminalOperation`)
	f.Fuzz(func(t *testing.T, line string) {
		op, ok := terminalOperation(line)
		if !ok {
			if op != "" {
				t.Fatalf("terminalOperation(%q) = %q, false", line, op)
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil || m["type"] != "terminalOperation" {
			t.Fatalf("terminalOperation(%q) took a line that is not one", line)
		}
		if _, err := parseAnswer(line, false); err == nil {
			t.Fatalf("%q is both a terminal operation and an answer", line)
		}
	})
}
