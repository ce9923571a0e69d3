package agent

import (
	"strings"
	"testing"
)

func TestParseAnswer(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Answer
		err  string
	}{
		{`{"type":"askResponse","askResponse":"yesButtonClicked"}`, Answer{Type: "askResponse", Response: YesButtonClicked}, ""},
		{`{"askResponse":"messageResponse","text":"port 8080"}`, Answer{Response: MessageResponse, Text: "port 8080"}, ""},
		{`{"askResponse":"yes"}`, Answer{}, "askResponse"},
		{`{"type":"other","askResponse":"yesButtonClicked"}`, Answer{}, "answer type"},
		{`{"askResponse":"yesButtonClicked","approve":true}`, Answer{}, "unknown field"},
		{`{"askResponse":"noButtonClicked"} {"askResponse":"yesButtonClicked"}`, Answer{}, "more than one"},
		{`y`, Answer{}, "not an answer"},
	} {
		got, err := ParseAnswer([]byte(tc.line))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseAnswer(%q) error = %v, want %q", tc.line, err, tc.err)
			}
			continue
		}
		if err != nil || got.Type != tc.want.Type || got.Response != tc.want.Response || got.Text != tc.want.Text {
			t.Errorf("ParseAnswer(%q) = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}

func FuzzParseAnswer(f *testing.F) {
	f.Add([]byte(`{"type":"askResponse","askResponse":"yesButtonClicked","text":"x"}`))
	f.Add([]byte(`{"askResponse":"noButtonClicked"}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		a, err := ParseAnswer(line)
		if err != nil {
			return
		}
		// Whatever parses is one of the three responses and nothing else.
		if a.Response != YesButtonClicked && a.Response != NoButtonClicked && a.Response != MessageResponse {
			t.Fatalf("ParseAnswer(%q) accepted response %q", line, a.Response)
		}
	})
}

func TestCategoriesPartitionAsks(t *testing.T) {
	for _, a := range ClineAsks {
		n := 0
		for _, in := range []bool{IsIdleAsk(a), IsInteractiveAsk(a), IsResumableAsk(a), IsNonBlockingAsk(a)} {
			if in {
				n++
			}
		}
		if n > 1 {
			t.Errorf("ask %s is in %d categories", a, n)
		}
	}
}
