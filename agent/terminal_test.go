package agent

import (
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	before := "a\nb\nc\nd\ne\nf\ng\nh\n"
	after := "a\nb\nc\nd\nE\nF2\nf\ng\nh\n"
	// Written by hand: line 5 "e" becomes "E" and "F2"; three lines of
	// context before (b, c, d) and after (f, g, h).
	want := "--- x.txt\n+++ x.txt\n@@ -2,7 +2,8 @@\n b\n c\n d\n-e\n+E\n+F2\n f\n g\n h\n"
	if got := unifiedDiff("x.txt", before, after); got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	if got := unifiedDiff("x.txt", "", "new\n"); got != "--- x.txt\n+++ x.txt\n@@ -0,0 +1 @@\n+new\n" {
		t.Errorf("diff from empty:\n%s", got)
	}
	if got := unifiedDiff("x.txt", "same\n", "same\n"); got != "" {
		t.Errorf("diff of equal files: %q", got)
	}
}

func TestParseTerminalAnswer(t *testing.T) {
	tool := Message{Type: TypeAsk, Ask: AskTool}
	q := Message{Type: TypeAsk, Ask: AskFollowup, Text: `{"question":"Port?","suggest":[{"answer":"3000"},{"answer":"8080"}]}`}
	for _, c := range []struct {
		ask  Message
		line string
		want Answer
	}{
		{tool, "y", Answer{Response: YesButtonClicked}},
		{tool, " YES ", Answer{Response: YesButtonClicked}},
		{tool, "n", Answer{Response: NoButtonClicked}},
		{tool, "y: keep it short", Answer{Response: YesButtonClicked, Text: "keep it short"}},
		{tool, "use port 8080", Answer{Response: MessageResponse, Text: "use port 8080"}},
		{tool, `{"type":"askResponse","askResponse":"noButtonClicked","text":"j"}`, Answer{Type: "askResponse", Response: NoButtonClicked, Text: "j"}},
		{q, "2", Answer{Response: MessageResponse, Text: "8080"}},
		{q, "3", Answer{Response: MessageResponse, Text: "3"}},
		{q, "y", Answer{Response: MessageResponse, Text: "y"}},
	} {
		got, err := ParseTerminalAnswer(c.ask, c.line)
		if err != nil || got.Response != c.want.Response || got.Text != c.want.Text {
			t.Errorf("%s %q = %+v, %v; want %+v", c.ask.Ask, c.line, got, err, c.want)
		}
	}
}

func TestRenderAskShowsDiffAndKeys(t *testing.T) {
	var b strings.Builder
	RenderAsk(&b, Message{Type: TypeAsk, Ask: AskTool, Text: mustJSON(SayTool{Tool: ToolEditedExistingFile, Path: "app/a.txt", Diff: "--- app/a.txt\n+++ app/a.txt\n@@ -1 +1 @@\n-a\n+b\n"})})
	for _, want := range []string{"The model wants to change app/a.txt", "-a\n+b\n", "[y] approve", "[n] reject", "type feedback"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("prompt lacks %q:\n%s", want, b.String())
		}
	}
}
